#!/usr/bin/env python3
"""Every module a target imports is one of its dependencies (or theirs): an undeclared one is
built only when the build happens to order it first, and a fresh build then fails at random
("no such module"). Reads the manifest through `swift package dump-package`."""
import glob, json, os, re, subprocess, sys

swift = sys.argv[1] if len(sys.argv) > 1 else "swift"
package = json.loads(subprocess.run([swift, "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
targets = {t["name"]: t for t in package["targets"]}

def dependencies(name):
    found = []
    for dependency in targets[name]["dependencies"]:
        for kind, value in dependency.items():
            if kind in ("byName", "target", "product"):
                found.append(value[0])
    return found

def closure(name, seen):
    for dependency in dependencies(name) if name in targets else []:
        if dependency not in seen:
            seen.add(dependency)
            closure(dependency, seen)
    return seen

failed = False
for name, target in targets.items():
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name
    imported = set()
    for source in glob.glob(path + "/**/*.swift", recursive=True):
        with open(source) as f:
            imported |= set(re.findall(r"^(?:@testable )?import (\w+)", f.read(), re.M))
    missing = sorted(m for m in imported if m in targets and m != name and m not in closure(name, set()))
    if missing:
        failed = True
        print(f"check-imports: {name} imports {', '.join(missing)} without depending on it (Package.swift)")
sys.exit(1 if failed else 0)
