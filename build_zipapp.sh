#!/usr/bin/env bash
# Build dist/claude-print.pyz: one self-contained, reproducible zipapp made with shiv.
#
#   ./build_zipapp.sh            # from any directory
#   OUT=/tmp/x.pyz ./build_zipapp.sh
#
# - Holds only the claude_print package (its *.py files) and shiv's bootstrap: no
#   third-party code. shiv is given the package as a ready --site-packages directory,
#   so pip is never run (nothing to resolve, no --no-deps needed, no network).
# - Reproducible: the same sources and the same shiv give the same bytes
#   (SOURCE_DATE_EPOCH + --reproducible fix every timestamp; file modes are normalised).
# - Not precompiled (no --compile-pyc), so one .pyz runs on Python 3.8 to 3.13.
# - shiv's generated __main__.py is replaced by a small launcher that makes the first-start
#   extraction into ~/.shiv safe when HOME is unset or read-only: see docs/shiv.md.
#
# Uses shiv from $SHIV, else .venv/bin/shiv, else a private build/shiv-venv that it
# creates with the shiv version pinned in requirements-dev.txt.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

OUT="${OUT:-$ROOT/dist/claude-print.pyz}"
MAX_BYTES=$((288 * 1024))
ENTRY_POINT="claude_print.command.cli:main"
# 1980-01-01, the earliest time a zip entry can hold (and shiv's own default).
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-315554400}"

die() { echo "build_zipapp.sh: $*" >&2; exit 1; }

shiv_pin="$(sed -n 's/^shiv==\([0-9][0-9.]*\).*/\1/p' requirements-dev.txt)"
[[ -n $shiv_pin ]] || die "no shiv==VERSION pin in requirements-dev.txt"

shiv_version() { "$1" --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p'; }

if [[ -n ${SHIV:-} ]]; then
    shiv_bin="$SHIV"
elif [[ -x .venv/bin/shiv && "$(shiv_version .venv/bin/shiv)" == "$shiv_pin" ]]; then
    shiv_bin="$ROOT/.venv/bin/shiv"
else
    shiv_bin="$ROOT/build/shiv-venv/bin/shiv"
    if [[ ! -x $shiv_bin || "$(shiv_version "$shiv_bin")" != "$shiv_pin" ]]; then
        echo "build_zipapp.sh: installing shiv==$shiv_pin into build/shiv-venv" >&2
        rm -rf build/shiv-venv
        python3 -m venv build/shiv-venv
        build/shiv-venv/bin/python -m pip install --quiet "shiv==$shiv_pin"
    fi
fi
have="$(shiv_version "$shiv_bin")"
[[ -n $have ]] || die "cannot run shiv ($shiv_bin)"
if [[ $have != "$shiv_pin" ]]; then
    echo "build_zipapp.sh: warning: shiv $have, not the pinned $shiv_pin: the bytes will differ" >&2
fi
# The Python that runs shiv (from its shebang) rewrites __main__.py below.
build_python="$(head -n1 "$shiv_bin" | sed 's/^#! *//')"
[[ -x $build_python ]] || build_python="$(dirname "$shiv_bin")/python"

# Stage the package with normalised modes (they are stored in the zip), in a stage of
# this build's own: two builds at once (test workers) must not empty each other's.
umask 022
mkdir -p "$ROOT/build"
stage="$(mktemp -d "$ROOT/build/zipapp.XXXXXX")"
tmp_out=
trap 'rm -rf "$stage"; [[ -z $tmp_out ]] || rm -f "$tmp_out"' EXIT
mkdir -p "$stage/site-packages"
(
    cd "$ROOT"
    find claude_print -name __pycache__ -prune -o -type f -name '*.py' -print
) | LC_ALL=C sort | while IFS= read -r f; do
    mkdir -p "$stage/site-packages/$(dirname "$f")"
    cp "$ROOT/$f" "$stage/site-packages/$f"
    chmod 644 "$stage/site-packages/$f"
done
[[ -f $stage/site-packages/claude_print/__init__.py ]] || die "claude_print/ not found in $ROOT"

mkdir -p "$(dirname "$OUT")"
tmp_out="$(dirname "$OUT")/.$(basename "$OUT").tmp.$$"

"$shiv_bin" \
    --site-packages "$stage/site-packages" \
    --entry-point "$ENTRY_POINT" \
    --python "/usr/bin/env python3" \
    --output-file "$tmp_out" \
    --reproducible \
    --compressed \
    >/dev/null

# Replace shiv's __main__.py ("import _bootstrap; _bootstrap.bootstrap()") with the
# launcher, keeping every other entry byte for byte and the same zip attributes.
"$build_python" - "$tmp_out" "$ENTRY_POINT" <<'PYEOF'
import sys
import zipfile

LAUNCHER = r'''# -*- coding: utf-8 -*-
"""claude-print launcher, written by build_zipapp.sh in place of shiv's __main__.py.

shiv's bootstrap extracts site-packages into ~/.shiv/<name>_<build_id>/ (or under
$SHIV_ROOT) at first start and dies with a traceback when it cannot: HOME unknown,
HOME read-only, disk full. So: do that extraction first, with shiv's own code (a flock
and an atomic rename, safe for concurrent first starts); if it fails, run the package
straight from this archive (zipimport) instead. Every later start finds the extracted
directory and runs from it without importing shiv's bootstrap at all (which costs
10-20 ms of imports). See docs/shiv.md.
"""
import os
import sys

BUILD_ID = "@BUILD_ID@"
ENTRY_MODULE, ENTRY_FUNCTION = "@ENTRY_POINT@".split(":")
# Any of these changes what shiv's bootstrap would do: then it runs, not the fast path.
SHIV_VARIABLES = (
    "SHIV_INTERPRETER", "SHIV_ENTRY_POINT", "SHIV_MODULE", "SHIV_CONSOLE_SCRIPT",
    "SHIV_FORCE_EXTRACT", "SHIV_COMPILE_PYC", "SHIV_COMPILE_WORKERS",
    "SHIV_EXTEND_PYTHONPATH", "SHIV_PREPEND_PYTHONPATH",
)


def _extracted():
    """The cache's site-packages when an earlier start extracted it, else None.

    shiv renames a finished extraction into place, so if the directory exists it is whole.
    The path is shiv's cache_path(): $SHIV_ROOT or ~/.shiv, then <file name>_<build id>.
    """
    if any(name in os.environ for name in SHIV_VARIABLES):
        return None
    root = os.path.expanduser(os.environ.get("SHIV_ROOT") or "~/.shiv")
    if not os.path.isabs(root):
        return None  # "$VAR" roots, HOME="": shiv's own rules apply
    name = os.path.basename(os.path.realpath(sys.argv[0]))
    site_packages = os.path.join(root, name + "_" + BUILD_ID, "site-packages")
    return site_packages if os.path.isdir(site_packages) else None


def _keep_bytecode(site_packages):
    """Bytecode for this interpreter in the cache, written once. Python writes none with
    PYTHONDONTWRITEBYTECODE set (many container images set it), and then every start
    compiled the whole package again: about 0.2 CPU-s of a short run's 0.35 (2026-11-27).
    The package's own __init__ is compiled last: its bytecode marks the work done."""
    tag = sys.implementation.cache_tag
    if not sys.dont_write_bytecode or tag is None or sys.pycache_prefix:
        return
    package = os.path.join(site_packages, ENTRY_MODULE.split(".")[0])
    marker = os.path.join(package, "__pycache__", "__init__." + tag + ".pyc")
    if os.path.exists(marker):
        return
    import py_compile

    sources = []
    for folder, _, names in os.walk(package):
        sources += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    top = os.path.join(package, "__init__.py")
    for source in sorted(sources, key=lambda path: path == top):
        try:
            py_compile.compile(source, doraise=True)
        except Exception:
            return  # a read-only cache: Python compiles in memory, as before


_site_packages = _extracted()
if _site_packages is not None:
    _keep_bytecode(_site_packages)
    sys.path.insert(0, _site_packages)
    _module = __import__(ENTRY_MODULE, fromlist=[ENTRY_FUNCTION])
    sys.exit(getattr(_module, ENTRY_FUNCTION)())

import _bootstrap  # noqa: E402  (first start, or a SHIV_* variable is set)


def _cache_ready():
    try:
        with _bootstrap.current_zipfile() as archive:
            env = _bootstrap.Environment.from_json(archive.read("environment.json").decode())
            target = _bootstrap.cache_path(archive, env.root, env.build_id)
            if not env.root and not target.is_absolute():
                return False  # HOME="" on Python < 3.12 would mean ./.shiv
            if env.force_extract or not (target / "site-packages").is_dir():
                _bootstrap.extract_site_packages(
                    archive, target, env.compile_pyc, env.compile_workers, env.force_extract
                )
                os.environ.pop(env.FORCE_EXTRACT, None)  # done: bootstrap() must not redo it
        return True
    except Exception:
        return False


def _run_from_archive():
    with _bootstrap.current_zipfile() as archive:
        env = _bootstrap.Environment.from_json(archive.read("environment.json").decode())
    sys.path.insert(0, os.path.join(os.path.abspath(sys.argv[0]), "site-packages"))
    _bootstrap.run(_bootstrap.import_string(env.entry_point))


if _cache_ready():
    _bootstrap.bootstrap()
else:
    _run_from_archive()
'''

import json

path, entry_point = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    shebang = f.readline()
    if not shebang.startswith(b"#!"):
        sys.exit("no shebang in " + path)
with zipfile.ZipFile(path) as zin:
    entries = [(info, zin.read(info)) for info in zin.infolist()]
    build_id = json.loads(zin.read("environment.json"))["build_id"]
launcher = LAUNCHER.replace("@BUILD_ID@", build_id).replace("@ENTRY_POINT@", entry_point)
names = [info.filename for info, _ in entries]
if names.count("__main__.py") != 1:
    sys.exit("unexpected archive layout: " + repr(names))
for name in names:
    if not (
        name in ("__main__.py", "environment.json")
        or name.startswith("_bootstrap/")
        or name.startswith("site-packages/claude_print/")
    ):
        sys.exit("unexpected file in the archive: " + name)
with open(path, "wb") as f:
    f.write(shebang)
    with zipfile.ZipFile(f, "w") as zout:
        for old, data in entries:
            info = zipfile.ZipInfo(old.filename, date_time=old.date_time)
            info.compress_type = old.compress_type
            info.external_attr = old.external_attr
            if old.filename == "__main__.py":
                data = launcher.encode("utf-8")
            zout.writestr(info, data)
PYEOF
chmod 755 "$tmp_out"

size=$(wc -c <"$tmp_out" | tr -d ' ')
if ((size >= MAX_BYTES)); then
    die "$(basename "$OUT") is $size bytes, over the $MAX_BYTES-byte limit"
fi
mv -f "$tmp_out" "$OUT"
tmp_out=

if command -v sha256sum >/dev/null 2>&1; then
    sha="$(sha256sum "$OUT" | cut -d' ' -f1)"
else
    sha="$(shasum -a 256 "$OUT" | cut -d' ' -f1)"
fi
build_id="$("$build_python" -c 'import json,sys,zipfile; print(json.loads(zipfile.ZipFile(sys.argv[1]).read("environment.json"))["build_id"])' "$OUT")"
echo "built $OUT"
echo "  size:     $size bytes ($(((size + 1023) / 1024)) KiB)"
echo "  sha256:   $sha"
echo "  build id: $build_id (cache dir: \${SHIV_ROOT:-~/.shiv}/<file name>_<build id>)"
