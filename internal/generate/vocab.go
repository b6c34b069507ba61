package generate

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
)

// The vocabularies generated names and texts are drawn from. They are
// large on purpose: an implementation must not be able to tell a
// generated case from a project's by its tool names or its wording, so
// no rule like "tools named read or submit" routes a case around a bug
// (docs/generate.md, "Names and texts").
var (
	verbs = []string{"read", "write", "search", "submit", "fetch", "list", "create", "delete", "update", "lookup",
		"send", "archive", "approve", "reject", "classify", "summarize", "translate", "render", "verify", "sign",
		"merge", "split", "count", "resolve", "notify", "schedule", "cancel", "export", "import", "scan", "open", "close"}
	nouns = []string{"file", "invoice", "record", "ticket", "order", "customer", "report", "contract", "page", "memo",
		"document", "folder", "entry", "message", "account", "batch", "draft", "form", "note", "policy", "quote",
		"receipt", "request", "review", "rule", "section", "summary", "table", "task", "user", "version", "attachment"}
	zhVerbs = []string{"查询", "读取", "写入", "提交", "审核", "归档", "检索", "核对", "生成", "删除", "更新", "发送", "批准", "翻译", "汇总", "签署"}
	zhNouns = []string{"公文", "档案", "发票", "合同", "工单", "报告", "附件", "条款", "表格", "记录", "订单", "客户", "批次", "章节", "摘要", "意见"}
	// sentences are the texts fragments, injections, handler returns and
	// error messages are made of, in English and Chinese.
	sentences = []string{
		"You are a careful assistant.", "Check every figure against the ledger.", "Use the tools; do not guess.",
		"The contract was signed on 3 May.", "No results.", "contents of a", "ok", "Done.", "Saved 3 records.",
		"Invoice 2026-0042: 1,250.00 EUR, due in 30 days.", "The page is empty.", "Permission denied.",
		"你是审核专家。", "按计划审核：\n1. 核对数字\n2. 检查签章", "请逐条核对附件中的金额。", "未找到匹配的记录。",
		"已归档 3 份公文。", "第二章第 4 条与原文不符。", "“本市”应改为“本区”。", "结果：通过",
		"Line one.\nLine two.", "Step 1: open the file.\nStep 2: read it.\n", "A value in braces: {x}.",
		"Tabs\tand  spaces.", "Ünïcödé ☃ and emoji 📎.", "Quote \"this\" and 'that'.", "Path ../output/x",
		// Issue 52: text outside the BMP (one code point, two UTF-16
		// units), decomposed letters (NFC would change them) and the
		// template's placeholder inside data (0006.D6.no-coercion.text,
		// 0010.D2.verbatim, 0010.D4.data).
		"Cafe\u0301 au lait, re\u0301sume\u0301 attached.", "扩展B区：\U00020000\U0002A6D6。", "\U0001F469\u200D\U0001F4BB deployed \U0001F680",
		"\U0001D518\U0001D52B\U0001D526 letters", "The template says {observation} here.", "x{observation}y",
		"{{observation}} and {observation:>9}",
	}
	// blanks are texts that are empty or white space only: an empty
	// fragment adds no message, a white-space one is a message
	// (0010.D2.empty); an empty model output or observation is still a
	// turn of the history. The empty text comes half the time.
	blanks = []string{"", "", "", " ", "\n", " \n "}
	// multiLine error messages: a port that keeps the first line only
	// cuts them (0008.D4.handler-error.format).
	multiLine = []string{"unknown month\nexpected 1 to 12", "第一行\n第二行", "bad input:\n  line 3: unexpected ','\n", "x\n\ny"}
)

// toolName draws a tool name in one of several styles; none of them is
// a name the suite's own scenarios use more than any other.
func toolName(r *rand.Rand) string {
	v, n := pick(r, verbs...), pick(r, nouns...)
	switch r.IntN(8) {
	case 0:
		return v
	case 1:
		return v + "_" + n
	case 2:
		return v + strings.ToUpper(n[:1]) + n[1:]
	case 3:
		return v + "-" + n
	case 4:
		return n + "." + v
	case 5:
		return pick(r, zhVerbs...) + pick(r, zhNouns...)
	case 6:
		return v + "_" + n + "_v" + string(rune('1'+r.IntN(9)))
	default:
		return strings.ToUpper(v[:1]) + v[1:] + strings.ToUpper(n[:1]) + n[1:]
	}
}

// toolNames draws n distinct names.
func toolNames(r *rand.Rand, n int) []string {
	var out []string
	for len(out) < n {
		if name := toolName(r); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// unknownName is a tool name none of the case's tools has; a quarter of
// the time it differs from a registered name in case only
// (0006.D6.names-exact).
func (s *spec) unknownName(r *rand.Rand) string {
	if chance(r, 0.25) {
		if name, ok := s.caseVariant(s.tools[r.IntN(len(s.tools))].name); ok {
			return name
		}
	}
	for {
		name := toolName(r)
		if !slices.ContainsFunc(s.tools, func(t tool) bool { return t.name == name }) {
			return name
		}
	}
}

// propName draws a property name, in English or Chinese.
func propName(r *rand.Rand) string {
	if chance(r, 0.15) {
		return pick(r, zhNouns...)
	}
	return pick(r, "path", "query", "limit", "id", "name", "page", "count", "text", "lang", "force", "amount", "date", "q", pick(r, nouns...)+"_id")
}

// text draws a non-empty text; blank draws one of the blank texts.
func text(r *rand.Rand) string  { return pick(r, sentences...) }
func blank(r *rand.Rand) string { return pick(r, blanks...) }

// textOrBlank is a text, an empty text (p 0.15) or a white-space one (p 0.1).
func textOrBlank(r *rand.Rand) string {
	switch x := r.Float64(); {
	case x < 0.15:
		return ""
	case x < 0.25:
		return blank(r)
	}
	return text(r)
}

// description draws a tool's description, sometimes none.
func description(r *rand.Rand, name string) string {
	switch r.IntN(4) {
	case 0:
		return ""
	case 1:
		return "Calls " + name + "."
	case 2:
		return pick(r, zhVerbs...) + pick(r, zhNouns...) + "，返回结果。"
	}
	return text(r)
}

// jsonText is s as a JSON string, without escaping HTML characters, as a
// model writes it.
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// caseVariant is name in another case that no tool of the case has; ok is
// false for a name without case (a Chinese one).
func (s *spec) caseVariant(name string) (string, bool) {
	swapped := strings.Map(func(c rune) rune {
		if u := unicode.ToUpper(c); u != c {
			return u
		}
		return unicode.ToLower(c)
	}, name)
	for _, v := range []string{strings.ToUpper(name), strings.ToLower(name), swapped} {
		if v != name && !slices.ContainsFunc(s.tools, func(t tool) bool { return t.name == v }) {
			return v, true
		}
	}
	return "", false
}
