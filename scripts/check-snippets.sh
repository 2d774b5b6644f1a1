#!/usr/bin/env bash
# Compiles (type-checks) every ```swift block of README.md and the DocC catalog
# (Sources/DepotCore/DepotCore.docc/*.md) against the package's built modules, so that the docs cannot
# drift from the API. Run from anywhere after `swift build` (CI runs it after the trait tests):
#
#   scripts/check-snippets.sh            # every snippet
#   scripts/check-snippets.sh README.md  # the snippets of some files
#
# Rules:
# - A block with an `import` line starts a unit; a block without one continues the unit before it
#   in the same file (so a tour can go on from its first snippet). Each unit is type-checked as a
#   program of its own (`swiftc -typecheck`, Swift 6 mode): imports it forgets are errors. A unit
#   without any import (a DocC article's fragment, read in the context of the module it
#   documents) is compiled after `import Depot` and `import Foundation`.
# - A unit that imports DepotMacros, DepotCrypto or DepotPostgres is checked against the modules
#   of that trait's build folder (.build-traits/macros, crypto, postgres: built here when missing,
#   as .ci/run builds them); the others against .build (no trait).
# - A Package.swift fragment (a block with `.package(` or `.product(`) is not compiled: its
#   version must be DepotVersion.current, its products products of Package.swift and its
#   traits traits of Package.swift.
# - `<!-- snippet: context NAME -->` on the line before a block's fence starts a unit after the
#   declarations of scripts/snippet-context/NAME.swift (an article's `store`, `Employee`, …);
#   the blocks after it continue that unit as above.
# - `<!-- snippet: skip REASON -->` on the line before a block's fence skips it; the reason is
#   printed. Use it only for fragments that cannot stand alone (`…` placeholders).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(README.md Sources/DepotCore/DepotCore.docc/*.md)
fi

exec python3 - "$root" "${files[@]}" <<'PY'
import glob, os, re, subprocess, sys, tempfile

root, files = sys.argv[1], sys.argv[2:]
manifest = open(os.path.join(root, "Package.swift")).read()
products = set(re.findall(r'\.(?:library|executable)\(name: "([^"]+)"', manifest))
traits = set(re.findall(r'\.trait\(name: "([^"]+)"', manifest))
version = re.search(r'current = "([^"]+)"', open(os.path.join(root, "Sources/DepotLMDB/DepotVersion.swift")).read()).group(1)
trait_of_module = {"DepotMacros": "Macros", "DepotCrypto": "Crypto", "Crypto": "Crypto", "DepotPostgres": "Postgres"}

# Units: (file, first line, trait or None, code) ; fragments and skips reported as they come.
units, failures, skipped, fragments = [], [], 0, 0
for path in files:
    lines = open(os.path.join(root, path)).read().split("\n")
    i, last_unit = 0, None
    while i < len(lines):
        if lines[i].strip() != "```swift":
            i += 1
            continue
        start = i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        code = "\n".join(lines[start:j])
        before = next((l for l in reversed(lines[:i]) if l.strip()), "")
        where = f"{path}:{start}"
        i = j + 1
        skip = re.match(r"\s*<!--\s*snippet:\s*skip\s*(.*?)\s*-->", before)
        if skip:
            print(f"skip  {where}: {skip.group(1)}")
            skipped += 1
            last_unit = None
            continue
        if ".package(" in code or ".product(" in code:
            fragments += 1
            problems = []
            for v in re.findall(r'from: "([^"]+)"', code):
                if v != version:
                    problems.append(f'from: "{v}" but DepotVersion.current is "{version}"')
            for p, pkg in re.findall(r'\.product\(name: "([^"]+)", package: "([^"]+)"\)', code):
                if pkg == "depot" and p not in products:
                    problems.append(f"no product {p} in Package.swift")
            for group in re.findall(r'traits: \[([^\]]*)\]', code):
                for t in re.findall(r'"([^"]+)"', group):
                    if t not in traits:
                        problems.append(f"no trait {t} in Package.swift")
            if problems:
                failures.append(where)
                print(f"FAIL  {where} (Package.swift fragment): " + "; ".join(problems))
            else:
                print(f"ok    {where} (Package.swift fragment: version, products and traits)")
            continue
        context = re.match(r"\s*<!--\s*snippet:\s*context\s+(\w+)\s*-->", before)
        if context:
            code = open(os.path.join(root, "scripts/snippet-context", context.group(1) + ".swift")).read() + "\n" + code
        imports = re.findall(r"^\s*import\s+(\w+)", code, re.M)
        if imports or last_unit is None:
            needed = {trait_of_module[m] for m in imports if m in trait_of_module}
            if len(needed) > 1:
                failures.append(where)
                print(f"FAIL  {where}: needs several traits {sorted(needed)}; split it")
                last_unit = None
                continue
            last_unit = [where, needed.pop() if needed else None, code]
            units.append(last_unit)
        else:
            last_unit[2] += "\n" + code

def build_dir(trait):
    scratch = os.path.join(root, ".build" if trait is None else ".build-traits/" + trait.lower())
    module = {None: "Depot", "Macros": "DepotMacros", "Crypto": "DepotCrypto", "Postgres": "DepotPostgres"}[trait]
    if not glob.glob(os.path.join(scratch, "debug", "Modules", module + ".swiftmodule")):
        command = ["swift", "build", "--package-path", root, "--scratch-path", scratch]
        if trait:
            command += ["--traits", trait]
        print("build " + " ".join(command), flush=True)
        subprocess.run(command, check=True)
    return scratch

flag_cache = {}
def flags(trait):
    if trait in flag_cache:
        return flag_cache[trait]
    scratch = build_dir(trait)
    bin_dir = os.path.join(scratch, "debug")
    result = ["-swift-version", "6", "-I", os.path.join(bin_dir, "Modules")]
    maps = [m for m in glob.glob(os.path.join(bin_dir, "*.build", "module.modulemap"))
            if not m.endswith("-tool.build/module.modulemap")]   # host copies of the same modules
    maps += glob.glob(os.path.join(root, "Sources", "*", "module.modulemap"))
    maps += glob.glob(os.path.join(root, "Sources", "*", "include", "module.modulemap"))
    maps += glob.glob(os.path.join(scratch, "checkouts", "*", "Sources", "*", "include", "module.modulemap"))
    maps += glob.glob(os.path.join(scratch, "checkouts", "*", "Sources", "*", "module.modulemap"))
    for m in sorted(set(maps)):
        result += ["-Xcc", "-fmodule-map-file=" + m]
    for inc in glob.glob(os.path.join(scratch, "checkouts", "*", "Sources", "*", "include")):
        result += ["-Xcc", "-I" + inc]
    # The include folders of the system libraries the modules import (libpq's headers are not
    # in /usr/include itself), as SwiftPM finds them for the package's system library targets.
    for library in ["lmdb", "libpq"]:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", library], capture_output=True, text=True)
        for flag in cflags.stdout.split() if cflags.returncode == 0 else []:
            result += ["-Xcc", flag]
    if trait == "Macros":
        plugin = os.path.join(bin_dir, "DepotMacrosPlugin-tool")
        result += ["-load-plugin-executable", plugin + "#DepotMacrosPlugin"]
    flag_cache[trait] = result
    return result

with tempfile.TemporaryDirectory(prefix="depot-snippets-") as work:
    for n, (where, trait, code) in enumerate(units):
        source = os.path.join(work, f"snippet{n}.swift")
        if not re.search(r"^\s*import\s+\w+", code, re.M):
            code = "import Depot\nimport Foundation\n" + code   # an article's context: see the rules
        open(source, "w").write(code + "\n")
        run = subprocess.run(["swiftc", "-typecheck"] + flags(trait) + [source],
                             capture_output=True, text=True, cwd=work)
        label = f"{where}" + (f" (trait {trait})" if trait else "")
        if run.returncode == 0 and "warning:" not in run.stderr:
            print(f"ok    {label}")
        else:
            failures.append(where)
            print(f"FAIL  {label}\n" + run.stderr.replace(source, where + "+"))

print(f"\n{len(units)} units compiled, {fragments} Package.swift fragments checked, {skipped} skipped, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
