# Sourced by the set-up scripts: installs Debian packages that are missing, as root or through sudo.
#   install_packages LABEL PACKAGE...
install_packages() {
    local label=$1 missing=() package
    shift
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "$label: installing ${missing[*]}"
    # One install at a time: make test's phases run side by side, and two apt-gets at once fail
    # on dpkg's lock.
    as_root flock /tmp/padgate-apt.lock sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null' \
        install_packages "${missing[@]}"
}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
