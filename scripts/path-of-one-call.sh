#!/usr/bin/env bash
# Lists the source files whose code runs for one `manage` call: a URL no cache holds, with a
# `FileCache`, from the call to the user's callback (Benchmarks/PathOfOneCall). It builds the
# probe with coverage, runs it once managing nothing and once managing the user, and keeps the
# functions that ran more often in the second run. The counting rule of the EngineInternals
# article: the file cache's files count as one stop, the URLSession loader's as one, the decoder
# as one; every other file of Sources/ManagedCache whose code ran counts once.
#
#     scripts/path-of-one-call.sh            # the files, grouped, and their count
#     scripts/path-of-one-call.sh --functions  # with the functions that ran in each file
set -euo pipefail
cd "$(dirname "$0")/.."
build=.build-path-of-one-call
swift build --product PathOfOneCall --build-path "$build" \
    -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >/dev/null
tools="$(dirname "$(readlink -f "$(command -v swift)")")"
binary="$build/debug/PathOfOneCall"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for mode in setup call; do
    LLVM_PROFILE_FILE="$scratch/$mode.profraw" "$binary" "$mode"
    "$tools/llvm-profdata" merge -o "$scratch/$mode.profdata" "$scratch/$mode.profraw"
    "$tools/llvm-cov" export -format=text -skip-expansions -instr-profile "$scratch/$mode.profdata" "$binary" \
        >"$scratch/$mode.json"
done
python3 - "$scratch/setup.json" "$scratch/call.json" "$tools/swift-demangle" "${1:-}" <<'PY'
import collections, json, subprocess, sys

def functions(path):
    data = json.load(open(path))["data"][0]
    return {f["name"]: f for f in data["functions"]}

setup, call = functions(sys.argv[1]), functions(sys.argv[2])
demangle, verbose = sys.argv[3], sys.argv[4] == "--functions"
# One stop each, however many files they span.
implementations = {
    "the FileCache (FileCaching)": lambda f: f.startswith("Caching/FileCache/") or f in ("Caching/PrivateFiles.swift", "Caching/FileProtection.swift"),
    "the URLSession loader (DataLoading)": lambda f: f in ("Loading/URLSessionDataLoader.swift", "Loading/SessionTransfer.swift", "Loading/BoundedDelegateQueue.swift", "Loading/HostConnectionLimit.swift", "Loading/DefaultDataLoader.swift", "Loading/TransferLaunch.swift"),
}
ran = collections.defaultdict(list)
for name, function in call.items():
    file = function["filenames"][0]
    before = setup[name]["count"] if name in setup else 0
    if function["count"] > before and "/Sources/ManagedCache/" in file:
        ran[file.split("/Sources/ManagedCache/")[1]].append(name)
stops = collections.defaultdict(list)
for file in ran:
    stop = next((label for label, test in implementations.items() if test(file)), file)
    stops[stop].append(file)
stops["the decoder (ObjectDecoding)"] = ["Benchmarks/PathOfOneCall/main.swift"]
for stop in sorted(stops):
    files = sorted(stops[stop])
    print(stop if stop in files and len(files) == 1 else f"{stop}: {len(files)} files")
    if verbose:
        for file in files:
            names = sorted(ran.get(file, []))
            text = subprocess.run([demangle, "--simplified"], input="\n".join(n.split(":")[-1] for n in names),
                                  capture_output=True, text=True).stdout.splitlines()
            for line in text:
                print(f"    {file}: {line[:140]}")
# The engine: every stop but the three implementations. Counted one by one: every file that ran,
# the decoder's included.
engine = len([stop for stop in stops if stop not in implementations and stop != "the decoder (ObjectDecoding)"])
print(f"{len(stops)} stops ({len(ran)} files of Sources/ManagedCache ran code for the call)")
print(f"{engine} engine files; {len(ran) + 1} files counted one by one (with the decoder's)")
PY
