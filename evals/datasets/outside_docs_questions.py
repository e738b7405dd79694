"""The questions of the outside-corpus set (:mod:`evals.datasets.build_outside_docs`): each
with its answer, aliases and evidence lines, written and checked by hand by this project
(issue 36).

Changing any of them changes the committed ``outside_docs.jsonl``.
"""

from __future__ import annotations

Evidence = tuple[str, int, int, str]
"""``(corpus path, first line, last line, quote)``, lines counted from 1, inclusive."""

ANSWERABLE: tuple[tuple[str, str, tuple[str, ...], str, tuple[Evidence, ...]], ...] = (
    # (question, answer, aliases, bridge, (bridge evidence, answer evidence))
    (
        "Git 2.25 gave the management of sparsely checked-out working trees a dedicated "
        "command. In which Git release did that command learn an 'add' subcommand?",
        "2.26.0",
        ("2.26", "Git 2.26"),
        "git sparse-checkout",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.26.0.txt", 54, 54, '"git sparse-checkout" learned a new "add"'),
        ),
    ),
    (
        "Git 2.23 split 'git checkout' into two new commands. In which release did the one "
        "for checking out paths start to take the contents out of HEAD by default when given "
        "both --staged and --worktree?",
        "2.27.0",
        ("2.27", "Git 2.27"),
        "git restore",
        (
            ("git-relnotes/2.23.0.txt", 61, 65, 'Two new commands "git switch" and "git restore"'),
            ("git-relnotes/2.27.0.txt", 112, 113, '"git restore --staged --worktree" now defaults'),
        ),
    ),
    (
        "In which Git release was the non-cone mode deprecated for the feature that got a "
        "dedicated command in Git 2.25?",
        "2.37.0",
        ("2.37", "Git 2.37"),
        "sparse-checkout",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.37.0.txt", 41, 41, "Deprecate non-cone mode of the sparse-checkout"),
        ),
    ),
    (
        "Git 2.29 introduced a 'big brother' of 'git gc'. In which release did that command's "
        "scheduler learn to use systemd timers?",
        "2.34.0",
        ("2.34", "Git 2.34"),
        "git maintenance",
        (
            ("git-relnotes/2.29.0.txt", 83, 85, '"git maintenance", a "git gc"\'s big brother'),
            ("git-relnotes/2.34.0.txt", 43, 44, "scheduler learned to use systemd timers"),
        ),
    ),
    (
        "In which Git release did the 'git gc' big brother introduced in Git 2.29 gain a task "
        "that packs refs?",
        "2.31.0",
        ("2.31", "Git 2.31"),
        "git maintenance",
        (
            ("git-relnotes/2.29.0.txt", 83, 85, '"git maintenance", a "git gc"\'s big brother'),
            ("git-relnotes/2.31.0.txt", 85, 85, 'learned a new "pack-refs" maintenance task'),
        ),
    ),
    (
        "Git 2.19 added a reimplementation of 'git tbdiff'. In which release did "
        "'git format-patch' learn an option named after that new command?",
        "2.20.0",
        ("2.20", "Git 2.20"),
        "git range-diff",
        (
            ("git-relnotes/2.19.0.txt", 80, 81, '"git range-diff" is a reimplementation of'),
            ("git-relnotes/2.20.0.txt", 57, 59, 'learned new "--interdiff" and "--range-diff"'),
        ),
    ),
    (
        "Git 2.27 added a tool for reporting bugs. In which release did that tool learn to "
        "report which shell is in use?",
        "2.28.0",
        ("2.28", "Git 2.28"),
        "git bugreport",
        (
            ("git-relnotes/2.27.0.txt", 173, 173, 'The "bugreport" tool has been added.'),
            ("git-relnotes/2.28.0.txt", 68, 68, '"git bugreport" learns to report what shell'),
        ),
    ),
    (
        "Git 2.27 demoted a transport protocol version from being the default. In which "
        "release did that protocol version become the default again?",
        "2.29.0",
        ("2.29", "Git 2.29"),
        "transport protocol version 2",
        (
            ("git-relnotes/2.27.0.txt", 27, 29, "has been demoted from the default"),
            ("git-relnotes/2.29.0.txt", 99, 99, "The transport protocol v2 has become the default"),
        ),
    ),
    (
        "Git 1.5.5 taught a command 'pop' and 'drop'. In which release did that command's "
        "'push' subcommand start taking a pathspec to save local changes only partially?",
        "2.13.0",
        ("2.13", "Git 2.13"),
        "git stash",
        (
            ("git-relnotes/1.5.5.txt", 161, 163, '"git stash" learned "pop" command'),
            ("git-relnotes/2.13.0.txt", 95, 96, '"git stash push" takes a pathspec'),
        ),
    ),
    (
        "Git 2.38 moved a 'diagnose' feature into 'git bugreport' from another tool. In which "
        "release was that tool's 'reconfigure -a' taught to remove entries for repositories "
        "that no longer exist?",
        "2.39.0",
        ("2.39", "Git 2.39"),
        "scalar",
        (
            ("git-relnotes/2.38.0.txt", 57, 59, 'has been lifted from "scalar"'),
            ("git-relnotes/2.39.0.txt", 38, 39, "'scalar reconfigure -a' is taught"),
        ),
    ),
    (
        "Git 2.34 replaced 'recursive' as the default merge strategy. In which release was the "
        "test framework first taught to optionally make the replacement strategy the default "
        "throughout the system?",
        "2.32.0",
        ("2.32", "Git 2.32"),
        "the ort merge strategy",
        (
            ("git-relnotes/2.34.0.txt", 18, 19, "The `ort` strategy is used instead of"),
            ("git-relnotes/2.32.0.txt", 176, 180, 'merge strategy to "ort" throughout the system'),
        ),
    ),
    (
        "The stream class that Node.js's fs.createReadStream() returns extends a class of "
        "another module. In which Node.js version was that parent class's toArray() method "
        "added?",
        "v17.5.0",
        ("17.5.0", "v16.15.0"),
        "stream.Readable",
        (
            ("nodejs-api/fs.md", 6807, 6816, "returned using the [`fs.createReadStream()`][]"),
            ("nodejs-api/stream.md", 2234, 2240, "added: - v17.5.0 - v16.15.0"),
        ),
    ),
    (
        "The Node.js class that represents the readable side of a TTY extends a class of "
        "another module. In which version was that class's resetAndDestroy() method added?",
        "v18.3.0",
        ("18.3.0", "v16.17.0"),
        "net.Socket",
        (
            ("nodejs-api/tty.md", 33, 45, "Represents the readable side of a TTY"),
            ("nodejs-api/net.md", 1238, 1244, "added: - v18.3.0 - v16.17.0"),
        ),
    ),
    (
        "tls.TLSSocket extends a class of another Node.js module. In which version was that "
        "class's autoSelectFamilyAttemptedAddresses property added?",
        "v19.4.0",
        ("19.4.0",),
        "net.Socket",
        (
            ("nodejs-api/tls.md", 839, 845, "* Extends: {net.Socket}"),
            ("nodejs-api/net.md", 867, 871, "added: v19.4.0"),
        ),
    ),
    (
        "http.Server extends a class of another Node.js module. In which version was the "
        "'drop' event added to that class?",
        "v18.6.0",
        ("18.6.0", "v16.17.0"),
        "net.Server",
        (
            ("nodejs-api/http.md", 1416, 1422, "* Extends: {net.Server}"),
            ("nodejs-api/net.md", 299, 305, "added: - v18.6.0 - v16.17.0"),
        ),
    ),
    (
        "repl.REPLServer extends a class of another Node.js module. In which version was that "
        "class's getPrompt() method added?",
        "v15.3.0",
        ("15.3.0", "v14.17.0"),
        "readline.Interface",
        (
            ("nodejs-api/repl.md", 442, 449, "* Extends: {readline.Interface}"),
            ("nodejs-api/readline.md", 325, 331, "added: - v15.3.0 - v14.17.0"),
        ),
    ),
    (
        "The server class of Node.js's https module extends a class of another module. In "
        "which version was that class's getTicketKeys() method added?",
        "v3.0.0",
        ("3.0.0",),
        "tls.Server",
        (
            ("nodejs-api/https.md", 115, 121, "* Extends: {tls.Server}"),
            ("nodejs-api/tls.md", 793, 797, "added: v3.0.0"),
        ),
    ),
    (
        "Http2SecureServer extends a class of another Node.js module. In which version was "
        "that class's setSecureContext() method added?",
        "v11.0.0",
        ("11.0.0",),
        "tls.Server",
        (
            ("nodejs-api/http2.md", 2513, 2519, "* Extends: {tls.Server}"),
            ("nodejs-api/tls.md", 810, 814, "added: v11.0.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0147 tells users of recursive fs.rmdir() to call another fs "
        "function instead. In which version was that callback function added?",
        "v14.14.0",
        ("14.14.0",),
        "fs.rm",
        (
            ("nodejs-api/deprecations.md", 2847, 2869, "Use `fs.rm(path, { recursive: true"),
            ("nodejs-api/fs.md", 4159, 4162, "added: v14.14.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0022 names the function to use instead of the removed "
        "os.tmpDir(). In which version was that replacement added?",
        "v0.9.9",
        ("0.9.9",),
        "os.tmpdir()",
        (
            ("nodejs-api/deprecations.md", 537, 552, "Please use [`os.tmpdir()`][] instead."),
            ("nodejs-api/os.md", 403, 406, "added: v0.9.9"),
        ),
    ),
    (
        "Node.js deprecation DEP0116 recommends another URL API instead of the legacy one. In "
        "which version did that API's URL class get its static canParse() method?",
        "v19.9.0",
        ("19.9.0",),
        "the WHATWG URL API",
        (
            ("nodejs-api/deprecations.md", 2302, 2325, "use the [WHATWG URL API][] instead."),
            ("nodejs-api/url.md", 675, 678, "added: v19.9.0"),
        ),
    ),
    (
        "Node.js deprecation DEP0005 lists the methods to use instead of the Buffer() "
        "constructor. In which version was the first of them, the one that creates a Buffer "
        "with initialized memory, added?",
        "v5.10.0",
        ("5.10.0",),
        "Buffer.alloc()",
        (
            (
                "nodejs-api/deprecations.md",
                136,
                160,
                "[alloc]: Create a `Buffer` with _initialized_ memory.",
            ),
            ("nodejs-api/buffer.md", 658, 661, "added: v5.10.0"),
        ),
    ),
)

UNANSWERABLE: tuple[tuple[str, str, tuple[Evidence, ...]], ...] = (
    # (question, what the corpus does not say and how that was checked, nearest passages)
    (
        "Git 2.23 introduced a new command for switching branches. In which release did that "
        "command stop being marked experimental?",
        "no release note up to 2.39.5 says 'git switch' or 'git restore' stopped being "
        "experimental (grep -i experimental over RelNotes: no line names either command)",
        (
            ("git-relnotes/2.23.0.txt", 61, 65, 'Two new commands "git switch" and "git restore"'),
            ("git-relnotes/2.36.0.txt", 67, 67, 'The error message given by "git switch HEAD~4"'),
        ),
    ),
    (
        "The non-cone mode of the feature that got a dedicated command in Git 2.25 was "
        "deprecated in 2.37. In which release was that mode removed?",
        "no release note says non-cone mode was removed (grep -i non-cone over RelNotes: only "
        "2.35.0 and 2.37.0 mention it)",
        (
            ("git-relnotes/2.25.0.txt", 67, 68, 'gained a dedicated "sparse-checkout" command'),
            ("git-relnotes/2.37.0.txt", 41, 41, "Deprecate non-cone mode of the sparse-checkout"),
        ),
    ),
    (
        "Git 2.27 added a tool for reporting bugs. In which release did that tool learn to "
        "report which terminal emulator is in use?",
        "no release note says git bugreport reports a terminal (grep -i bugreport over RelNotes: "
        "2.27.0, 2.28.0 (the shell), 2.32.0 (fixes), 2.38.0 (diagnose) only)",
        (
            ("git-relnotes/2.27.0.txt", 173, 173, 'The "bugreport" tool has been added.'),
            ("git-relnotes/2.28.0.txt", 68, 68, '"git bugreport" learns to report what shell'),
        ),
    ),
    (
        "The stream class that Node.js's fs.createReadStream() returns extends a class of "
        "another module. In which version was that parent class's toArray() method marked "
        "stable?",
        "stream.md marks readable.toArray() 'Stability: 1 - Experimental' and its YAML block "
        "records no change of stability",
        (
            ("nodejs-api/fs.md", 6807, 6816, "returned using the [`fs.createReadStream()`][]"),
            ("nodejs-api/stream.md", 2234, 2242, "Stability: 1 - Experimental"),
        ),
    ),
    (
        "Node.js deprecation DEP0147 covers fs.rmdir() with the recursive option. In which "
        "version did that deprecation reach End-of-Life?",
        "DEP0147 is 'Type: Runtime'; its changes are v14.14.0 (documentation-only), v15.0.0 and "
        "v16.0.0 (runtime); no End-of-Life version",
        (
            ("nodejs-api/deprecations.md", 2847, 2869, "Type: Runtime"),
            ("nodejs-api/fs.md", 4159, 4162, "added: v14.14.0"),
        ),
    ),
)
