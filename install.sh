#!/bin/sh
# Install claude-print (one self-contained .pyz) as ${PREFIX:-$HOME/.local}/bin/claude-print.
#
#   ./install.sh                  # from a checkout or an unpacked release
#   PREFIX=/usr/local ./install.sh
#
# What it installs, from the directory this script is in:
#   claude-print   dist/claude-print.pyz, else claude-print.pyz beside this script (a
#                  release download), else (in a checkout) built by build_zipapp.sh
#   mock-claude    mock_claude/mock_claude.py (skipped when SKIP_MOCK_CLAUDE=1)
#   claude-print.yaml  the NEEDLE adapter, into the folder NEEDLE reads adapters from
#                  (agent.adapters_dir in ~/.config/needle/config.yaml, by default
#                  ~/.config/needle/adapters/), when NEEDLE is installed or configured
# then prints `claude-print --version` and runs `claude-print --check` (SKIP_CHECK=1
# skips it). Exit 0 means installed and runnable: the check's FAIL lines (no Claude Code
# or no login yet) are printed as next steps; STRICT_CHECK=1 makes them exit non-zero
# (the check's code, 2), the install still in place. Any other failure exits 1.
#
# The installed copy's first line names the interpreter directly, with -S, instead of the
# .pyz's portable "#!/usr/bin/env python3": the Python behind `python3` on PATH (a pyenv
# or asdf shim resolved to the real binary; a venv to its base interpreter), if every
# user can run it and it lives outside home directories; else the system's python3
# (3.8+); else the portable line. A shim costs ~100 ms per start and site's .pth files
# more; claude-print needs no site-packages.
#   CLAUDE_PRINT_PYTHON=/path/to/python3 ./install.sh   # use that interpreter
#   CLAUDE_PRINT_PYTHON=env ./install.sh                # keep "#!/usr/bin/env python3"
#
# Every file is copied to a temp file in the target directory and renamed into place.
# An existing claude-print that differs is kept as claude-print.prev. Roll back with:
#   mv ~/.local/bin/claude-print.prev ~/.local/bin/claude-print
set -eu

say() { printf '%s\n' "install.sh: $*"; }
die() { printf '%s\n' "install.sh: error: $*" >&2; exit 1; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)

# --- checks that touch nothing -----------------------------------------------------------
python=${CLAUDE_PRINT_PYTHON:-python3}
[ "$python" = env ] && python=python3
command -v "$python" >/dev/null 2>&1 ||
    die "$python not found: claude-print needs Python 3.8 or newer"
py_version=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) ||
    die "$python does not run"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' ||
    die "$python is $py_version: claude-print needs Python 3.8 or newer"

# The interpreter for the installed copy's first line, or "" to keep the .pyz's own.
shebang_python=
if [ "${CLAUDE_PRINT_PYTHON:-}" != env ]; then
    shebang_python=$("$python" -c '
import os, sys
exe = sys.executable
if sys.prefix != sys.base_prefix:  # a venv can be deleted: use the Python it was made from
    base = os.path.join(sys.base_prefix, "bin", "python3")
    exe = base if os.access(base, os.X_OK) else exe
print(exe)
' 2>/dev/null) || shebang_python=
    case $shebang_python in
        /*) ;;
        *) shebang_python= ;;  # not an absolute path: keep /usr/bin/env
    esac
    case $shebang_python in
        *[[:space:]]*) shebang_python= ;;  # a first line cannot hold a path with spaces
    esac
    [ "${#shebang_python}" -le 120 ] || shebang_python=
fi
# Unless chosen by name, the interpreter must be one every user can run that outlives
# the installing user's own Pythons: not under a home directory (a pyenv or asdf build
# there is unreadable to others and may be removed), readable and executable by all
# along its whole path. Else the system's python3 (3.8 or newer), else the portable line.
runnable_by_all() {
    "$python" -S -c '
import os, stat, sys
path = sys.argv[1]
homes = [os.path.realpath(h) for h in (os.environ.get("HOME") or "", "/root", "/home") if h]
real = os.path.realpath(path)
if any(real == h or real.startswith(h.rstrip("/") + "/") for h in homes):
    sys.exit(1)
part = real
while True:
    mode = os.stat(part).st_mode
    need = stat.S_IXOTH | (stat.S_IROTH if part == real else 0)
    if mode & need != need:
        sys.exit(1)
    if part == "/":
        break
    part = os.path.dirname(part)
' "$1" 2>/dev/null
}
if [ -z "${CLAUDE_PRINT_PYTHON:-}" ] && [ -n "$shebang_python" ] && ! runnable_by_all "$shebang_python"; then
    shebang_python=
    for candidate in /usr/bin/python3 /usr/local/bin/python3 /bin/python3; do
        if [ -x "$candidate" ] && runnable_by_all "$candidate" &&
            "$candidate" -S -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' 2>/dev/null; then
            shebang_python=$candidate
            break
        fi
    done
fi

if [ -n "${PREFIX:-}" ]; then
    prefix=$PREFIX
elif [ -n "${HOME:-}" ]; then
    prefix=$HOME/.local
else
    die "neither PREFIX nor HOME is set: say where to install, e.g. PREFIX=/usr/local"
fi
bindir=$prefix/bin
target=$bindir/claude-print

if [ -f "$here/dist/claude-print.pyz" ]; then
    pyz=$here/dist/claude-print.pyz
elif [ -f "$here/claude-print.pyz" ]; then
    pyz=$here/claude-print.pyz
elif [ -x "$here/build_zipapp.sh" ] && [ -d "$here/claude_print" ]; then
    say "no dist/claude-print.pyz: building it"
    "$here/build_zipapp.sh" || die "build_zipapp.sh failed"
    pyz=$here/dist/claude-print.pyz
else
    die "no claude-print.pyz beside install.sh and no checkout to build one from"
fi

mock_src=
if [ "${SKIP_MOCK_CLAUDE:-0}" != 1 ]; then
    for f in "$here/mock_claude/mock_claude.py" "$here/mock_claude.py" "$here/mock-claude"; do
        if [ -f "$f" ]; then mock_src=$f; break; fi
    done
    [ -n "$mock_src" ] || say "warning: mock_claude/mock_claude.py not found: mock-claude not installed"
fi

# --- install -----------------------------------------------------------------------------
tmp=
cleanup() { if [ -n "$tmp" ]; then rm -f "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# put_file SRC DEST MODE: copy SRC to a temp file beside DEST, then rename it over DEST.
put_file() {
    tmp=$(mktemp "$(dirname -- "$2")/.$(basename -- "$2").XXXXXX")
    cp -- "$1" "$tmp"
    chmod "$3" "$tmp"
    mv -f -- "$tmp" "$2"
    tmp=
}

# keep_prev DEST: keep the current DEST as DEST.prev (a hard link, so DEST never vanishes).
keep_prev() {
    ln -f -- "$1" "$1.prev" 2>/dev/null || cp -p -- "$1" "$1.prev"
}

mkdir -p -- "$bindir" || die "cannot create $bindir"

# The file to install: the .pyz, with its first line naming $shebang_python if there is one.
# The zip after that line records its offsets from the start of the file, so the archive
# may move forward but never back: a comment line makes up for a shorter first line.
staged=$(mktemp "$bindir/.claude-print.staged.XXXXXX")
tmp=$staged
first_line="#!$shebang_python -S"
pad="# installed by claude-print's install.sh (the line above names the interpreter)"
if [ -n "$shebang_python" ] &&
    [ $((${#first_line} + ${#pad} + 2)) -ge "$(head -n 1 -- "$pyz" | wc -c)" ]; then
    { printf '%s\n%s\n' "$first_line" "$pad"; tail -n +2 -- "$pyz"; } >"$staged"
else
    cp -- "$pyz" "$staged"
fi
if [ -f "$target" ] && cmp -s -- "$staged" "$target"; then
    rm -f -- "$staged"
    say "claude-print in $bindir is already this build"
else
    if [ -f "$target" ]; then
        keep_prev "$target"
        say "kept the previous claude-print as $target.prev"
    fi
    chmod 755 "$staged"
    mv -f -- "$staged" "$target"
    say "installed $target"
fi
tmp=
say "it runs with: $(head -n 1 "$target" | cut -c 3-)"

if [ -n "$mock_src" ]; then
    put_file "$mock_src" "$bindir/mock-claude" 755
    say "installed $bindir/mock-claude"
fi

# NEEDLE (the Rust one) loads adapters only from its config's agent.adapters_dir, by
# default $HOME/.config/needle/adapters (no XDG_CONFIG_HOME), and creates no such folder.
# claude_print.needle reads that setting the way NEEDLE does (from the .pyz just installed,
# or this checkout); the folder is made when NEEDLE is installed or configured here.
if [ -n "${HOME:-}" ]; then
    needle_dir=$("$python" -S -c '
import os, sys
sys.path[:0] = sys.argv[1:]
from claude_print.needle.view import NeedleConfig
print(NeedleConfig(os.environ).adapters_dir)
' "$pyz/site-packages" "$here" 2>/dev/null) || needle_dir=$HOME/.config/needle/adapters
    if [ ! -f "$here/claude-print.yaml" ]; then
        say "warning: no claude-print.yaml beside install.sh: NEEDLE adapter not installed"
    elif [ -d "$needle_dir" ] || [ -d "$HOME/.config/needle" ] ||
        command -v needle >/dev/null 2>&1; then
        mkdir -p -- "$needle_dir" || die "cannot create NEEDLE's adapters dir $needle_dir"
        dest=$needle_dir/claude-print.yaml
        if [ -f "$dest" ] && ! cmp -s -- "$here/claude-print.yaml" "$dest"; then
            cp -p -- "$dest" "$dest.prev"
            say "kept the previous $dest as $dest.prev"
        fi
        put_file "$here/claude-print.yaml" "$dest" 644
        say "installed $dest (NEEDLE's adapters dir)"
        say "NEEDLE runs it only when told to: set 'agent.default: claude-print' in $HOME/.config/needle/config.yaml, or run needle with --agent claude-print"
    else
        say "NEEDLE is not set up here (no $HOME/.config/needle, no needle on PATH): claude-print.yaml not installed; run install.sh again after installing NEEDLE"
    fi
fi

case ":${PATH:-}:" in
    *":$bindir:"*) ;;
    *) say "warning: $bindir is not on PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac

# --- verify ------------------------------------------------------------------------------
version=$("$target" --version 2>&1) || die "claude-print --version failed:
$version"
say "claude-print --version: $version"

if [ "${SKIP_CHECK:-0}" = 1 ]; then
    say "SKIP_CHECK=1: not running claude-print --check"
    exit 0
fi
# The exit code says whether claude-print is installed and runs (it is, by here). What
# --check finds missing on this machine (Claude Code, a login) is the user's next step,
# fatal only with STRICT_CHECK=1.
if check_out=$("$target" --check 2>&1); then
    say "claude-print --check passed"
else
    rc=$?
    printf '%s\n' "$check_out" | grep '^FAIL ' >&2 || printf '%s\n' "$check_out" >&2
    if [ "${STRICT_CHECK:-0}" = 1 ]; then
        say "claude-print --check failed (exit $rc; STRICT_CHECK=1); claude-print stays installed in $bindir" >&2
        exit "$rc"
    fi
    say "installed; before the first run, fix what claude-print --check reports above (FAIL lines), then run claude-print --check again" >&2
fi
