#!/usr/bin/env bash
# Writes padgate(1) from the built binary's own --help texts, so the manual never drifts from the
# command line: tools/make-man.sh PATH/TO/padgate > padgate.1
set -euo pipefail
bin=${1:?usage: tools/make-man.sh PATH/TO/padgate}
escape() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
version=$("$bin" --version)
cat <<HEAD
.TH PADGATE 1 "$(date -u +%Y-%m-%d)" "padgate $version" "User Commands"
.SH NAME
padgate \- Linux gamepad input and haptics gateway
.SH SYNOPSIS
.B padgate
.I subcommand
.RI [ options ]
.SH DESCRIPTION
HEAD
"$bin" --help | sed -n '/^OVERVIEW:/,/^USAGE:/p' | sed -e 's/^OVERVIEW: //' -e '/^USAGE:/d' | escape
echo ".SH COMMANDS"
for sub in $("$bin" --help | sed -n '/^SUBCOMMANDS:/,$p' | awk '/^  [a-z]/ {print $1}'); do
    echo ".SS padgate $sub"
    echo ".nf"
    "$bin" help "$sub" | escape
    echo ".fi"
done
cat <<'TAIL'
.SH FILES
.TP
.I $XDG_STATE_HOME/padgate
identities and paired clients ($HOME/.local/state/padgate when unset; $PADGATE_STATE_DIR overrides)
.TP
.I $XDG_CONFIG_HOME/padgate/known_hosts
hosts this client has paired with ($HOME/.config/padgate)
.TP
.I /var/lib/padgate
the padgate-serve service's state
.SH SEE ALSO
.BR systemctl (1),
.BR udevadm (8)
TAIL
