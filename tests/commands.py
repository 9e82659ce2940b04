#!/usr/bin/env python3
"""The external commands that shell scripts call, and the Debian package
that gives each: every one must come from a package that `tools/deps.sh`
installs (or one those depend on) or from Debian's essential set, or a fresh
Debian 12 fails where this machine passes.

    tests/commands.py [--list] SCRIPT...

The scripts are parsed by shfmt (no regex guesses at bash): a command is the
first word of a simple command, also inside $(...), after wrappers such as
timeout or setsid, in `bash -c '...'` and `eval`, and in the conditions that
tests/lib.sh's `expect` evaluates. Words that are variables ($GMT) are the
project's own programs and are not looked up. Exits 1 naming each command
that nothing installed by deps.sh gives; --list prints command, package.
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

# wrappers whose command is a later word: how many words after the wrapper's
# own options to skip (timeout's duration)
WRAPPERS = {"timeout": 1, "setsid": 0, "nohup": 0, "env": 0, "sudo": 0,
            "exec": 0, "command": 0, "xargs": 0, "unshare": 0, "nsenter": 0,
            "setpriv": 0, "stdbuf": 0, "nice": 0, "ionice": 0, "taskset": 1,
            "chrt": 1, "time": 0, "chroot": 1}
# options of wrappers that take a value as the next word
OPT_ARGS = {"-k", "-s", "--signal", "--kill-after", "-u", "-g", "-n", "-t",
            "-p", "--target", "-i", "-o", "-e", "-c", "--bounding-set",
            "--inh-caps", "--reuid", "--regid", "--ambient-caps",
            "--propagation", "-S", "-P", "-I", "-d", "-L"}
# words that evaluate their first argument as shell code
EVALS = {"eval", "expect"}
# bash -c CODE
SHELLS = {"bash", "sh", "dash"}


def literal(word):
    """A word's text when it is all literal (quotes allowed), else None."""
    out = []
    for part in word.get("Parts", []):
        t = part.get("Type")
        if t == "Lit":
            out.append(part["Value"])
        elif t == "SglQuoted":
            out.append(part["Value"])
        elif t == "DblQuoted":
            inner = literal(part)
            if inner is None:
                return None
            out.append(inner)
        else:
            return None
    return "".join(out)


def parse(code):
    r = subprocess.run(["shfmt", "--tojson", "-ln", "bash"], input=code,
                       capture_output=True, text=True)
    if r.returncode:
        return None
    return json.loads(r.stdout)


SNIPPET = "__commands_snippet_"


class Scan:
    def __init__(self):
        self.calls = {}  # command -> first place seen
        self.funcs = set()
        self.pending = []  # nested code: (text, where, line of its call)

    def code(self, text, where, line=None):
        """line: the line of the call whose argument text is, if nested;
        parsed later, with the others, by drain()"""
        self.pending.append((text, where, line))

    def drain(self):
        """Parse the nested code, a batch at a time: each piece the body of
        a function of one script (one shfmt run, not hundreds); a batch
        that does not parse as one is parsed piece by piece."""
        while self.pending:
            batch, self.pending = self.pending, []
            script = "".join("%s%d() {\n%s\n}\n" % (SNIPPET, i, t)
                             for i, (t, _, _) in enumerate(batch))
            tree = parse(script)
            if tree is None:
                for text, where, line in batch:
                    t = parse(text)
                    if t is not None:
                        self.walk(t, where, line)
                continue
            for stmt in tree.get("Stmts", []):
                fn = stmt.get("Cmd", {})
                name = fn.get("Name", {}).get("Value", "")
                if fn.get("Type") != "FuncDecl" or not name.startswith(SNIPPET):
                    continue
                _, where, line = batch[int(name[len(SNIPPET):])]
                self.walk(fn.get("Body"), where, line)

    def walk(self, node, where, outer):
        if isinstance(node, list):
            for n in node:
                self.walk(n, where, outer)
            return
        if not isinstance(node, dict):
            return
        t = node.get("Type")
        if t == "FuncDecl":
            self.funcs.add(node["Name"]["Value"])
        if t == "CallExpr" and node.get("Args"):
            self.call(node["Args"], where, outer or node["Pos"]["Line"])
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                self.walk(v, where, outer)

    def call(self, args, where, line):
        words = [literal(a) for a in args]
        i = 0
        while i < len(words):
            name = words[i]
            if name is None or "=" in name.split("/")[0] and i > 0:
                # env VAR=value CMD
                if name is not None and i > 0:
                    i += 1
                    continue
                return
            if "/" in name:  # a path: the project's own, or an absolute one
                return
            self.calls.setdefault(name, "%s:%d" % (where, line))
            rest = words[i + 1:]
            if name in EVALS and rest and rest[0] is not None:
                self.code(rest[0], where, line)
                return
            if name in SHELLS:
                for j, w in enumerate(rest[:-1]):
                    if w == "-c" and rest[j + 1] is not None:
                        self.code(rest[j + 1], where, line)
                return
            if name not in WRAPPERS:
                return
            skip = WRAPPERS[name]
            i += 1
            while i < len(words) and words[i] is not None and words[i].startswith("-"):
                if words[i] == "--":
                    i += 1
                    break
                i += 2 if words[i] in OPT_ARGS else 1
            i += skip


BUILTINS = set("""alias bg bind break builtin caller cd command compgen complete
compopt continue declare dirs disown echo enable eval exec exit export false fc
fg getopts hash help history jobs kill let local logout mapfile popd printf
pushd pwd read readarray readonly return set shift shopt source suspend test
times trap true type typeset ulimit umask unalias unset wait . : [ [[ ]]
""".split())


def deps_packages(root):
    out = subprocess.run([os.path.join(root, "tools/deps.sh"), "--list"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def closure(pkgs):
    """The packages that installing pkgs brought, by Depends and PreDepends,
    from dpkg's own database (no apt lists needed: images often drop them)."""
    r = subprocess.run(["dpkg-query", "-W", "-f",
                        "${Package}\t${Provides}\t${Pre-Depends}, ${Depends}\n"],
                       capture_output=True, text=True)
    deps, provides = {}, {}

    def names(field):
        return [re.split(r"[ :(]", alt.strip())[0] for dep in field.split(",")
                for alt in dep.split("|") if alt.strip()]
    for line in r.stdout.splitlines():
        pkg, prov, dep = (line.split("\t") + ["", ""])[:3]
        deps[pkg] = names(dep)
        for v in names(prov):
            provides.setdefault(v, []).append(pkg)
    seen, todo = set(), list(pkgs)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo += deps.get(p, []) + provides.get(p, [])
    return seen


def essential():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential} ${Priority}\\n"],
                       capture_output=True, text=True)
    out = set()
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 3 and (p[1] == "yes" or p[2] == "required"):
            out.add(p[0])
    return out


def owners(paths):
    """The package that holds each path, tried as found and as resolved
    (Debian 12 merges /bin into /usr/bin; dpkg knows one of the two)."""
    tries = {}
    for path in paths:
        cand = [path, os.path.realpath(path)]
        for p in list(cand):
            for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/")):
                if p.startswith(a):
                    cand.append(b + p[len(a):])
                elif p.startswith(b):
                    cand.append(a + p[len(b):])
        tries[path] = cand
    allp = sorted({c for cand in tries.values() for c in cand})
    r = subprocess.run(["dpkg-query", "-S"] + allp, capture_output=True, text=True)
    held = {}
    for line in r.stdout.splitlines():
        if line.startswith("diversion by"):
            continue
        pkgs, _, p = line.partition(": ")
        held[p.strip()] = pkgs.split(",")[0].strip().split(":")[0]
    return {path: next((held[c] for c in cand if c in held), None)
            for path, cand in tries.items()}


def main(argv):
    listing = "--list" in argv
    files = [a for a in argv if a != "--list"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scan = Scan()
    texts = []
    for f in files:
        with open(f) as fh:
            texts.append(fh.read())
    # shfmt's runs are most of the time: one per core at once
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        trees = list(pool.map(parse, texts))
    for f, tree in zip(files, trees):
        if tree is None:
            print("%s: shfmt cannot parse it" % f)
            return 1
        scan.walk(tree, os.path.relpath(f, root), None)
    scan.drain()
    # deps.sh installs Node.js 20 itself (tools/node), not as a package
    provided = {"node": "tools/deps.sh (Node.js 20)"}
    allowed = closure(deps_packages(root)) | essential()
    names = sorted(n for n in scan.calls if n not in BUILTINS and n not in scan.funcs
                   and n not in ("time", "exec", "command"))
    # where a fresh Debian 12 has its commands: not /usr/local, nor this
    # machine's own additions (a pyenv shim is no python3 there)
    paths = {n: shutil.which(n, path="/usr/sbin:/usr/bin:/sbin:/bin") for n in names}
    held = owners([p for p in paths.values() if p])
    bad = 0
    for name in names:
        if name in provided:
            pkg, ok = provided[name], True
        else:
            pkg = held.get(paths[name]) if paths[name] else None
            ok = pkg in allowed
        if listing:
            print("%s %s" % (name, pkg or "-"))
        if not ok:
            bad += 1
            if pkg:
                print("%s (%s) calls %s, from %s, which tools/deps.sh does not install"
                      % (scan.calls[name], name, name, pkg))
            else:
                print("%s calls %s, which no installed package gives" % (scan.calls[name], name))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
