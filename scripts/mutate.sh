#!/usr/bin/env bash
# Mutation check: does a one-line change to a module's logic fail one of its unit tests?
# It applies one mutant at a time to a scratch copy of the tree (never the working tree),
# rebuilds the module's unit tests incrementally and runs them with a per-mutant timeout. A
# mutant is killed when a test fails, crashes or times out, survives when they all pass, and
# is stillborn (not counted) when it does not compile.
#
# Mutants, each on one line of code (comments, strings and preprocessor lines excluded):
#   relational operators swapped   < <=, > >=, == !=  (each way)
#   logical operators swapped      && ||
#   integer literals off by one    n -> n+1, n -> n-1;  x + 1 <-> x - 1
#   a dropped condition            if (c) return|break|continue  ->  if (0) ...
#
# usage: scripts/mutate.sh [--files "common/decide.c ..."] [--max N] [--seed S]
#                          [--timeout SECONDS] [--work DIR] [--ids "ID ..."] [--list] [--jobs N]
#   --files    modules to mutate (default, the core: common/decide.c common/rules/sequential.c
#              common/rules/median.c common/rules.c worker/protocol.c coordinator/search.c
#              coordinator/trust.c coordinator/record.c)
#   --max      mutants per module, sampled with --seed (default 30; 0: every one); the sample is
#              drawn from all of a module's mutants, and the listed equivalents in it are then
#              skipped, so listing one changes nothing else in the sample
#   --seed     the sample's seed (default 1): the same seed and tree try the same mutants
#   --timeout  seconds per mutant's test run (default 60)
#   --work     scratch directory (default ${TMPDIR:-/tmp}/tunefarm-mutate); its build/ stays
#              between runs, so a second run rebuilds only what a mutant touches
#   --ids      try only these mutants ("id id ..."), e.g. the survivors of an earlier run
#   --list     print the sampled mutants and stop
# scripts/mutate-equivalent.txt lists mutants that no test can kill (same behaviour), by the
# id this script prints, with the reason; they are skipped and counted apart.
# Exit status: 0 no survivor, 1 survivors, 2 bad usage or the unmutated tests fail.
# About 10 s a mutant on two cores once the scratch build exists (with ccache when installed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v python3 >/dev/null || { echo "mutate: python3 is required" >&2; exit 2; }
exec python3 - "$root" "$@" <<'PY'
import hashlib, os, random, re, shutil, subprocess, sys, time

root = sys.argv[1]
args = sys.argv[2:]
CORE = ("common/decide.c common/rules/sequential.c common/rules/median.c common/rules.c "
        "worker/protocol.c coordinator/search.c coordinator/trust.c coordinator/record.c")
opts = {"files": CORE,
        "max": "30", "seed": "1", "ids": "", "timeout": "60", "jobs": "2",
        "work": os.path.join(os.environ.get("TMPDIR", "/tmp"), "tunefarm-mutate")}
listing = False
i = 0
while i < len(args):
    a = args[i]
    if a == "--list":
        listing = True
        i += 1
        continue
    if not a.startswith("--") or a[2:] not in opts or i + 1 >= len(args):
        print(f"mutate: unknown or incomplete option '{a}'", file=sys.stderr)
        sys.exit(2)
    opts[a[2:]] = args[i + 1]
    i += 2
try:
    nmax, seed, limit, jobs = (int(opts[k]) for k in ("max", "seed", "timeout", "jobs"))
except ValueError:
    print("mutate: --max, --seed, --timeout and --jobs take integers", file=sys.stderr)
    sys.exit(2)
files = opts["files"].split()

# The unit tests that exercise each module (the ones a mutant of it must fail).
TESTS = {
    "common/decide.c": ["test_decide", "test_rules", "test_protocol", "test_study_replay"],
    "common/rules/sequential.c": ["test_decide", "test_rules", "test_study_replay"],
    "common/rules/median.c": ["test_decide", "test_rules"],
    "common/rules.c": ["test_rules", "test_decide", "test_example_rule"],
    "worker/protocol.c": ["test_protocol"],
    "coordinator/search.c": ["test_search"],
    "coordinator/trust.c": ["test_trust", "test_search"],
    "coordinator/record.c": ["test_record", "test_ledger"],
}
for f in files:
    if f not in TESTS or not os.path.isfile(os.path.join(root, f)):
        print(f"mutate: '{f}' is not a module this script knows ({', '.join(TESTS)})",
              file=sys.stderr)
        sys.exit(2)


def code_mask(text):
    """For each character: True where it is code (not a comment, string or char literal)."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if text[k] != "\n":
                mask[k] = False
        i = j
    return mask


def close_paren(line, i):
    depth = 0
    for j in range(i, len(line)):
        if line[j] == "(":
            depth += 1
        elif line[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


REL = [(r"<=", "<"), (r">=", ">"), (r"==", "!="), (r"!=", "=="), (r"&&", "||"),
       (r"\|\|", "&&"), (r"(?<![<\-])<(?![<=])", "<="), (r"(?<![>\-])>(?![>=])", ">=")]


def line_mutants(line, code):
    """(column, description, new line) for each mutant of one line; code[k]: k is code."""
    out = []
    def ok(s, e):
        return all(code[s:e])
    for pat, rep in REL:
        for m in re.finditer(pat, line):
            if ok(m.start(), m.end()):
                out.append((m.start(), f"'{m.group(0)}' -> '{rep}'",
                            line[:m.start()] + rep + line[m.end():]))
    for m in re.finditer(r"(?<=[\w)\]])(\s*)([+-])(\s*)1(?![\w.])", line):
        s = m.start(2)
        if re.search(r"\breturn\s*$", line[:s]):  # a sign, not a sum: the literals' turn
            continue
        if ok(s, m.end()) and line[s:s + 2] not in ("++", "--", "+=", "-="):
            flip = "-" if m.group(2) == "+" else "+"
            out.append((s, f"'{m.group(2)} 1' -> '{flip} 1'", line[:s] + flip + line[s + 1:]))
    for m in re.finditer(r"(?<![\w.])\d+(?![\w.])", line):
        if not ok(m.start(), m.end()):
            continue
        if re.search(r"sizeof\W*[\w.>\-]+\[$", line[:m.start()]):  # x[0] and x[1]: one size
            continue
        n = int(m.group(0))
        # After a unary minus (an error return's -1), only toward zero: -2 reads the same.
        unary = re.search(r"(^|[^\w)\]\s])\s*-\s*$", line[:m.start()])
        for v in [n - 1] if unary else [n + 1, n - 1] if n > 0 else [n + 1]:
            out.append((m.start(), f"'{n}' -> '{v}'", line[:m.start()] + str(v) + line[m.end():]))
    for m in re.finditer(r"\bif\s*\(", line):
        o = m.end() - 1
        c = close_paren(line, o)
        if c < 0 or not ok(m.start(), c + 1):
            continue
        if re.match(r"\s*(return|break|continue)\b", line[c + 1:]) and line[o + 1:c] != "0":
            out.append((m.start(), f"'if ({line[o + 1:c]})' -> 'if (0)'",
                        line[:o + 1] + "0" + line[c:]))
    return out


def mutants_of(path):
    text = open(os.path.join(root, path)).read()
    mask = code_mask(text)
    lines = text.split("\n")
    found, pos, seen = [], 0, {}
    for no, line in enumerate(lines, 1):
        code = mask[pos:pos + len(line)]
        pos += len(line) + 1
        if line.lstrip().startswith("#") or "__attribute__" in line or not any(code):
            continue
        for col, desc, new in line_mutants(line, code):
            key = f"{path}\0{line.strip()}\0{new.strip()}"
            h = hashlib.sha1(key.encode()).hexdigest()[:10]
            seen[h] = seen.get(h, 0) + 1
            if seen[h] > 1:  # the same line twice in a file: number the copies
                h = hashlib.sha1(f"{key}\0{seen[h]}".encode()).hexdigest()[:10]
            found.append({"id": h, "file": path, "line": no, "col": col + 1, "desc": desc,
                          "old": line, "new": new})
    return found


def equivalents():
    eq, path = {}, os.path.join(root, "scripts", "mutate-equivalent.txt")
    if os.path.exists(path):
        for raw in open(path):
            raw = raw.split("#", 1)[0].strip()
            if raw:
                parts = raw.split(None, 2)
                eq[parts[0]] = parts[2] if len(parts) > 2 else ""
    return eq


eq = equivalents()
# An entry whose id no mutant of any known module has any more (its line changed) is stale.
known = {m["id"] for f in TESTS if os.path.isfile(os.path.join(root, f)) for m in mutants_of(f)}
stale = sorted(i for i in eq if i not in known)
if stale:
    print(f"mutate: {len(stale)} entries of scripts/mutate-equivalent.txt match no mutant "
          f"(their line changed): {' '.join(stale)}")
# The sample is drawn from every mutant of a module, listed equivalents included, and those
# are then set aside: listing one does not pull another mutant into the sample.
plan, skipped = [], {f: 0 for f in files}
for f in files:
    all_m = mutants_of(f)
    drawn = list(all_m)
    random.Random(f"{seed}:{f}").shuffle(drawn)
    drawn = drawn if nmax <= 0 else drawn[:nmax]
    if opts["ids"]:  # these mutants alone, wherever the sample falls
        drawn = [m for m in all_m if m["id"] in opts["ids"].split()]
    pick = [m for m in drawn if m["id"] not in eq]
    skipped[f] = len(drawn) - len(pick)
    plan += sorted(pick, key=lambda m: (m["line"], m["col"], m["desc"]))
    print(f"mutate: {f}: {len(all_m)} mutants ({sum(m['id'] in eq for m in all_m)} listed "
          f"equivalent); drew {len(drawn)}, {skipped[f]} of them listed equivalent, "
          f"trying {len(pick)}")
if listing:
    for m in plan:
        print(f"{m['id']}  {m['file']}:{m['line']}:{m['col']}  {m['desc']}")
    sys.exit(0)

# The scratch tree: the working tree's tracked and untracked (not ignored) files.
work = os.path.abspath(opts["work"])
src, build = os.path.join(work, "src"), os.path.join(work, "build")
if os.path.commonpath([work, root]) == root:
    print("mutate: --work must be outside the repository", file=sys.stderr)
    sys.exit(2)
names = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], check=True, capture_output=True).stdout
# A file is copied (with a new time) only where its text differs from the scratch copy's: the
# build then recompiles exactly what changed since the last run, a mutant's restored file too.
for name in names.decode().split("\0"):
    here, there = os.path.join(root, name), os.path.join(src, name)
    if not name or not os.path.isfile(here):
        continue
    with open(here, "rb") as fh:
        text = fh.read()
    if os.path.isfile(there):
        with open(there, "rb") as fh:
            if fh.read() == text:
                continue
    os.makedirs(os.path.dirname(there), exist_ok=True)
    with open(there, "wb") as fh:
        fh.write(text)
    shutil.copymode(here, there)

env = dict(os.environ, TF_SOURCE_DIR=src, TUNEFARM_CACHE=os.path.join(build, "test-cache"),
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
cfg = ["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
if shutil.which("ccache"):
    cfg.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
if subprocess.run(cfg, capture_output=True).returncode:
    print("mutate: cmake failed in the scratch tree", file=sys.stderr)
    sys.exit(2)


def build_and_test(tests, why=None):
    """'ok', 'fail' (a test failed or timed out) or 'nobuild'; why[0]: the output that says so."""
    why = why if why is not None else []
    b = subprocess.run(["cmake", "--build", build, "-j", str(jobs), "--target", *tests],
                       capture_output=True, text=True, errors="replace")
    if b.returncode:
        why.append(b.stdout[-3000:] + b.stderr[-3000:])
        return "nobuild"
    for t in tests:
        try:
            r = subprocess.run([os.path.join(build, "tests", t)], cwd=build, env=env,
                               capture_output=True, text=True, errors="replace", timeout=limit,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            why.append(f"{t}: timed out after {limit} s")
            return "fail"
        if r.returncode:
            why.append(f"{t}: exit {r.returncode}\n" + r.stdout[-3000:] + r.stderr[-3000:])
            return "fail"
    return "ok"


needed = sorted({t for f in files for t in TESTS[f]})
t0 = time.time()
why = []
if build_and_test(needed, why) != "ok":
    print("mutate: the unmutated tests do not build or pass in the scratch tree:\n" + why[0],
          file=sys.stderr)
    sys.exit(2)
print(f"mutate: scratch tree built and tested in {time.time() - t0:.0f} s ({work})")

tally = {f: {"killed": 0, "survived": 0, "stillborn": 0} for f in files}
survivors = []
for k, m in enumerate(plan, 1):
    path = os.path.join(src, m["file"])
    orig = open(path).read()
    lines = orig.split("\n")
    lines[m["line"] - 1] = m["new"]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))
    try:
        got = build_and_test(TESTS[m["file"]])
    finally:
        with open(path, "w") as fh:
            fh.write(orig)
    verdict = {"fail": "killed", "ok": "survived", "nobuild": "stillborn"}[got]
    tally[m["file"]][verdict] += 1
    if verdict == "survived":
        survivors.append(m)
    print(f"[{k}/{len(plan)}] {verdict:9s} {m['file']}:{m['line']}:{m['col']}  {m['desc']}  "
          f"(id {m['id']})", flush=True)

how = f"--ids ({len(plan)})" if opts["ids"] else f"seed {seed}, --max {nmax}"
print(f"\nmutate: {how}, {time.time() - t0:.0f} s")


def line(name, t, eqs):
    n = t["killed"] + t["survived"]
    pct = 100.0 * t["survived"] / n if n else 0.0
    print(f"  {name}: survived {t['survived']} of {n} tried ({pct:.1f}%); killed {t['killed']}, "
          f"{eqs} listed equivalent skipped, {t['stillborn']} did not compile")


total = {"killed": 0, "survived": 0, "stillborn": 0}
for f in files:
    line(f, tally[f], skipped[f])
    for k in total:
        total[k] += tally[f][k]
line("total", total, sum(skipped.values()))
for m in survivors:
    print(f"  survivor {m['id']}  {m['file']}:{m['line']}  {m['desc']}\n"
          f"      {m['new'].strip()}")
sys.exit(1 if survivors else 0)
PY
