package compare

import "testing"

// stackTraceTest: one trace as each runtime prints it, and prose that
// none of the patterns may flag.
func TestStackTraceRuntime(t *testing.T) {
	traces := map[string]string{
		"Python":                "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    run()\nValueError: bad",
		"Go":                    "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d",
		"Java/Kotlin":           "java.lang.IllegalStateException: bad\n\tat com.example.Tool.run(Tool.java:42)\n\tat com.example.Main.main(Main.kt:7)",
		"C#":                    "System.InvalidOperationException: bad\n   at Example.Tools.Search.Run(String query) in /src/Search.cs:line 17\n   at Example.Program.Main(String[] args)",
		"JavaScript/TypeScript": "TypeError: x is undefined\n    at search (/app/src/tools.ts:14:9)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
		"Rust":                  "thread 'main' panicked at src/main.rs:4:5:\nindex out of bounds\nnote: run with `RUST_BACKTRACE=1`",
		"C++":                   "terminate called after throwing an instance of 'std::runtime_error'\n#0  0x00007f3a2b in raise () from /lib/libc.so.6\n#1  0x0000555 in run() at tool.cpp:31",
		"PHP":                   "PHP Fatal error:  Uncaught Exception: bad in /var/www/tool.php:12\nStack trace:\n#0 /var/www/index.php(5): run()\n#1 {main}",
		"Ruby":                  "tool.rb:12:in `search': bad (RuntimeError)\n\tfrom main.rb:3:in `<main>'",
		"Elixir":                "** (RuntimeError) bad\n    (my_app 0.1.0) lib/my_app/tool.ex:12: MyApp.Tool.run/1\n    (elixir 1.15.7) lib/enum.ex:1693: Enum.\"-map/2-lists^map/1-0-\"/2",
	}
	for rt, tr := range traces {
		if got := StackTraceRuntime(tr); got != rt {
			t.Errorf("%s trace: recognised as %q", rt, got)
		}
		if TextRule("x", tr) == "" {
			t.Errorf("%s trace passes the text rule", rt)
		}
	}
	prose := []string{
		"The tool search was not called: the output is not an action.",
		"Call search at most twice (once per phase).",
		"Retry at 10:30 (UTC) or later.",
		"at the end of the file (see line 3) the value is missing",
		"The executor refused: tool \"write\" is not in the visible set.",
		"本市 2026 年工作要点：第 3 条不符合要求。",
		"Environment error: connection reset at step 2; file report.md not written.",
		"thread is 'main'; exception in thread handling was ignored",
		"Use version 1.2.3 from lib/tools (section 4: Search.run/1 is the entry).",
		"ValueError: bad input",
		"#1 priority: fix the report",
		"from the file at main.rb line 3 in the header",
	}
	for _, p := range prose {
		if rt := StackTraceRuntime(p); rt != "" {
			t.Errorf("prose %q flagged as a %s trace", p, rt)
		}
	}
}
