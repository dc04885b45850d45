#!/bin/sh
# Installs padgate from this tarball, on any Linux with glibc 2.36 or newer (docs/install.md).
#   ./install.sh                  system-wide under /usr/local: udev rules, the serve service, the
#                                 forward user unit (root)
#   ./install.sh --user           for this user under ~/.local, for an immutable root (SteamOS):
#                                 the forward user unit; prints the one root step, for the udev rules
#   --prefix DIR                  another prefix;  --uninstall  removes what an install put there
set -eu
here=$(cd "$(dirname "$0")" && pwd)
user=0 prefix= uninstall=0
while [ $# -gt 0 ]; do
    case $1 in
        --user) user=1 ;;
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix=$2; shift ;;
        --prefix=*) prefix=${1#--prefix=} ;;
        --uninstall) uninstall=1 ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ $user = 1 ]; then
    : "${HOME:?install.sh --user needs HOME}"
    prefix=${prefix:-$HOME/.local}
    userunits=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user
else
    [ "$(id -u)" = 0 ] || { echo "install.sh: a system install needs root (sudo ./install.sh), or use --user" >&2; exit 1; }
    prefix=${prefix:-/usr/local}
    userunits=/etc/systemd/user
fi
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac
manifest=$prefix/share/padgate/installed-files

if [ $uninstall = 1 ]; then
    [ -f "$manifest" ] || { echo "install.sh: nothing of padgate's is installed under $prefix" >&2; exit 1; }
    while IFS= read -r file; do rm -f "$file"; done < "$manifest"
    rm -f "$manifest"
    rmdir "$prefix/share/padgate" "$prefix/lib/padgate" 2>/dev/null || true
    echo "padgate removed from $prefix"
    exit 0
fi

files=$(mktemp) tmpunit=$(mktemp)
trap 'rm -f "$files" "$tmpunit"' EXIT
put() {  # put MODE SOURCE DESTINATION
    mkdir -p "$(dirname "$3")"
    cp "$2" "$3.new" && chmod "$1" "$3.new" && mv -f "$3.new" "$3"
    printf '%s\n' "$3" >> "$files"
}
unit() {  # unit TEMPLATE DESTINATION: ExecStart names this install's binary
    sed "s|@BINDIR@|$prefix/bin|" "$1" > "$tmpunit"
    put 0644 "$tmpunit" "$2"
}
put 0755 "$here/bin/padgate" "$prefix/bin/padgate"
for lib in "$here"/lib/padgate/*; do put 0644 "$lib" "$prefix/lib/padgate/${lib##*/}"; done
put 0644 "$here/share/man/man1/padgate.1.gz" "$prefix/share/man/man1/padgate.1.gz"
put 0644 "$here/share/bash-completion/completions/padgate" "$prefix/share/bash-completion/completions/padgate"
put 0644 "$here/share/zsh/site-functions/_padgate" "$prefix/share/zsh/site-functions/_padgate"
put 0644 "$here/share/fish/vendor_completions.d/padgate.fish" "$prefix/share/fish/vendor_completions.d/padgate.fish"
put 0644 "$here/share/padgate/70-padgate.rules" "$prefix/share/padgate/70-padgate.rules"
unit "$here/share/padgate/padgate-forward.service.in" "$userunits/padgate-forward.service"
if [ $user = 0 ]; then
    put 0644 "$here/share/padgate/70-padgate.rules" /etc/udev/rules.d/70-padgate.rules
    put 0644 "$here/share/padgate/71-padgate-serve.rules" /etc/udev/rules.d/71-padgate-serve.rules
    put 0644 "$here/share/padgate/modules-load.conf" /etc/modules-load.d/padgate.conf
    put 0644 "$here/share/padgate/sysusers.conf" /etc/sysusers.d/padgate.conf
    unit "$here/share/padgate/padgate-serve.service.in" /etc/systemd/system/padgate-serve.service
fi
mkdir -p "$(dirname "$manifest")"
cp "$files" "$manifest"
"$prefix/bin/padgate" --version >/dev/null || { echo "install.sh: $prefix/bin/padgate does not run here (glibc older than 2.36?)" >&2; exit 1; }

echo "padgate $("$prefix/bin/padgate" --version) installed under $prefix"
if [ $user = 1 ]; then
    case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "  add $prefix/bin to PATH" ;; esac
    echo "  the one step that needs root (pads' nodes for this user; on SteamOS the root stays read-only, /etc is writable):"
    echo "    sudo install -m 0644 '$prefix/share/padgate/70-padgate.rules' /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger"
    echo "  forward at login: padgate pair HOST PIN; echo PADGATE_HOST=HOST > ~/.config/padgate/forward.env; systemctl --user enable --now padgate-forward"
else
    echo "  now: sudo udevadm control --reload && sudo udevadm trigger"
    echo "  the host service: sudo systemd-sysusers && sudo systemctl daemon-reload && sudo systemctl enable --now padgate-serve"
    echo "  forward at login, per user: systemctl --user enable --now padgate-forward"
fi
echo "  what is missing: padgate doctor"
