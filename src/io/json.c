/*
 * json.c — a small strict JSON reader (RFC 8259) for the safetensors header.
 *
 * Recursive descent with a depth limit, into a flat array of nodes (containers link their
 * children) and one pool of decoded, NUL-terminated strings. Strict: UTF-8 is validated, escapes
 * must be the JSON ones (\uXXXX surrogate pairs combined, lone surrogates refused), no control
 * characters in strings, no leading zeros, no trailing commas, comments, NaN or Infinity, nothing
 * after the value but whitespace. Errors say what was expected and at which byte. Non-negative
 * integer literals keep their exact value (u, is_uint) beside the double, since shapes and
 * offsets are integers past 2^53 in hostile files. Read next: safetensors.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ioi.h"

typedef struct parser {
	const char *s;
	size_t len, pos;
	lmj_doc *doc;
	int depth;
} parser;

static int perr(parser *p, const char *fmt, const char *arg)
{
	char m[100];
	snprintf(m, sizeof m, fmt, arg ? arg : "");
	snprintf(p->doc->err, sizeof p->doc->err, "bad JSON at byte %zu: %s", p->pos, m);
	return -1;
}

static void skip_ws(parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
		p->pos++;
	}
}

static int32_t new_node(parser *p, lmj_type t)
{
	lmj_doc *d = p->doc;
	if (d->n == d->cap) {
		int32_t cap = d->cap ? d->cap * 2 : 64;
		if (cap < d->cap || (size_t)cap > SIZE_MAX / sizeof(lmj_node)) return perr(p, "too many values", NULL);
		lmj_node *nn = lm_alloc((size_t)cap * sizeof *nn);
		if (!nn) {
			d->nomem = true;
			return perr(p, "out of memory", NULL);
		}
		if (d->n) memcpy(nn, d->nodes, (size_t)d->n * sizeof *nn);
		if (d->nodes) lm_free(d->nodes, (size_t)d->cap * sizeof *nn);
		d->nodes = nn;
		d->cap = cap;
	}
	lmj_node *n = &d->nodes[d->n];
	memset(n, 0, sizeof *n);
	n->type = t;
	n->child = n->next = -1;
	return d->n++;
}

/* ---------------------------------------------------------------- strings */

static int hex4(parser *p, uint32_t *out)
{
	if (p->pos + 4 > p->len) return perr(p, "a \\u escape needs 4 hex digits", NULL);
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos++];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0) return perr(p, "a \\u escape needs 4 hex digits", NULL);
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

static void put_utf8(char *o, size_t *k, uint32_t cp)
{
	if (cp < 0x80) {
		o[(*k)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*k)++] = (char)(0xc0 | cp >> 6);
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*k)++] = (char)(0xe0 | cp >> 12);
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		o[(*k)++] = (char)(0xf0 | cp >> 18);
		o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int escape(parser *p, char *o, size_t *k)
{
	if (p->pos >= p->len) return perr(p, "unterminated string", NULL);
	char c = p->s[p->pos++];
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *hit = c ? strchr(from, c) : NULL;
	if (hit) {
		o[(*k)++] = to[hit - from];
		return 0;
	}
	if (c != 'u') return perr(p, "unknown escape in a string", NULL);
	uint32_t cp, lo;
	if (hex4(p, &cp)) return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff) return perr(p, "a lone low surrogate in a \\u escape", NULL);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
			return perr(p, "a high surrogate without its low surrogate", NULL);
		p->pos += 2;
		if (hex4(p, &lo)) return -1;
		if (lo < 0xdc00 || lo > 0xdfff) return perr(p, "a high surrogate without its low surrogate", NULL);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	put_utf8(o, k, cp);
	return 0;
}

/* Parses a string at p->pos (the opening quote) into the pool; *off, *n: where and how long. */
static int parse_string(parser *p, uint32_t *off, uint32_t *n)
{
	lmj_doc *d = p->doc;
	p->pos++; /* the quote */
	size_t start = d->pool_len, k = start;
	char *o = d->pool;
	for (;;) {
		if (p->pos >= p->len) return perr(p, "unterminated string", NULL);
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c == '"') break;
		if (c < 0x20) return perr(p, "a control character inside a string", NULL);
		if (c == '\\') {
			p->pos++;
			if (escape(p, o, &k)) return -1;
			continue;
		}
		o[k++] = (char)c;
		p->pos++;
	}
	p->pos++;
	if (!lmi_utf8_valid(o + start, k - start)) return perr(p, "a string that is not valid UTF-8", NULL);
	if (k - start > UINT32_MAX - 1) return perr(p, "a string too long", NULL);
	o[k++] = '\0';
	*off = (uint32_t)start;
	*n = (uint32_t)(k - start - 1);
	d->pool_len = k;
	return 0;
}

/* ---------------------------------------------------------------- numbers */

static int parse_number(parser *p, lmj_node *n)
{
	size_t start = p->pos;
	const char *s = p->s;
	bool neg = false, integer = true;
	if (s[p->pos] == '-') {
		neg = true;
		p->pos++;
	}
	if (p->pos >= p->len || !(s[p->pos] >= '0' && s[p->pos] <= '9'))
		return perr(p, "a number needs digits", NULL);
	uint64_t u = 0;
	bool overflow = false;
	if (s[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
			return perr(p, "a number with a leading zero", NULL);
	} else {
		while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') {
			unsigned dgt = (unsigned)(s[p->pos++] - '0');
			if (u > (UINT64_MAX - dgt) / 10) overflow = true;
			u = u * 10 + dgt;
		}
	}
	if (p->pos < p->len && s[p->pos] == '.') {
		integer = false;
		p->pos++;
		if (p->pos >= p->len || !(s[p->pos] >= '0' && s[p->pos] <= '9'))
			return perr(p, "a fraction needs digits", NULL);
		while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
	}
	if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
		integer = false;
		p->pos++;
		if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-')) p->pos++;
		if (p->pos >= p->len || !(s[p->pos] >= '0' && s[p->pos] <= '9'))
			return perr(p, "an exponent needs digits", NULL);
		while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9') p->pos++;
	}
	char buf[64];
	size_t len = p->pos - start;
	if (len < sizeof buf) {
		memcpy(buf, s + start, len);
		buf[len] = '\0';
		n->num = strtod(buf, NULL);
	} else {
		n->num = overflow || !integer ? (neg ? -1e308 : 1e308) : (double)u;
	}
	n->is_uint = integer && !neg && !overflow;
	n->u = n->is_uint ? u : 0;
	return 0;
}

/* ---------------------------------------------------------------- values */

static int32_t parse_value(parser *p);

static int match_word(parser *p, const char *w)
{
	size_t n = strlen(w);
	if (p->pos + n > p->len || memcmp(p->s + p->pos, w, n) != 0) return 0;
	p->pos += n;
	return 1;
}

/* The children of an array or object at node i; close is ']' or '}'. */
static int32_t parse_container(parser *p, int32_t i, char close)
{
	if (++p->depth > LMJ_MAX_DEPTH) return perr(p, "nested deeper than 64 levels", NULL);
	p->pos++; /* the opening bracket */
	skip_ws(p);
	int32_t last = -1;
	bool object = close == '}';
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		p->depth--;
		return i;
	}
	for (;;) {
		uint32_t koff = 0, klen = 0;
		if (object) {
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != '"') return perr(p, "expected a string key", NULL);
			if (parse_string(p, &koff, &klen)) return -1;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') return perr(p, "expected ':' after a key", NULL);
			p->pos++;
		}
		int32_t c = parse_value(p);
		if (c < 0) return -1;
		lmj_node *nodes = p->doc->nodes; /* may have moved */
		nodes[c].key = koff;
		nodes[c].key_len = klen;
		if (last < 0) nodes[i].child = c;
		else nodes[last].next = c;
		last = c;
		nodes[i].count++;
		skip_ws(p);
		if (p->pos >= p->len) return perr(p, object ? "unterminated object" : "unterminated array", NULL);
		char ch = p->s[p->pos++];
		if (ch == close) break;
		if (ch != ',') {
			p->pos--;
			return perr(p, object ? "expected ',' or '}'" : "expected ',' or ']'", NULL);
		}
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == close) return perr(p, "a trailing comma", NULL);
	}
	p->depth--;
	return i;
}

static int32_t parse_value(parser *p)
{
	skip_ws(p);
	if (p->pos >= p->len) return perr(p, "expected a value, found the end", NULL);
	char c = p->s[p->pos];
	int32_t i;
	switch (c) {
	case '{':
	case '[':
		if ((i = new_node(p, c == '{' ? LMJ_OBJECT : LMJ_ARRAY)) < 0) return -1;
		return parse_container(p, i, c == '{' ? '}' : ']');
	case '"': {
		if ((i = new_node(p, LMJ_STRING)) < 0) return -1;
		uint32_t off, n;
		if (parse_string(p, &off, &n)) return -1;
		p->doc->nodes[i].str = off;
		p->doc->nodes[i].str_len = n;
		return i;
	}
	case 't':
	case 'f':
	case 'n': {
		lmj_type t = c == 't' ? LMJ_TRUE : c == 'f' ? LMJ_FALSE : LMJ_NULL;
		if (!match_word(p, c == 't' ? "true" : c == 'f' ? "false" : "null"))
			return perr(p, "unknown word (expected true, false or null)", NULL);
		return new_node(p, t);
	}
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			if ((i = new_node(p, LMJ_NUMBER)) < 0) return -1;
			return parse_number(p, &p->doc->nodes[i]) ? -1 : i;
		}
		return perr(p, "unexpected character (expected a value)", NULL);
	}
}

lm_status lmj_parse(const char *text, size_t len, lmj_doc *doc)
{
	memset(doc, 0, sizeof *doc);
	/* decoded strings never exceed their source; one NUL per string, at most one per 2 bytes */
	doc->pool_cap = len + len / 2 + 16;
	doc->pool = lm_alloc(doc->pool_cap);
	if (!doc->pool) {
		snprintf(doc->err, sizeof doc->err, "out of memory for a %zu-byte JSON text", len);
		doc->nomem = true;
		return LM_ERR_NOMEM;
	}
	parser p = {text, len, 0, doc, 0};
	if (parse_value(&p) >= 0) {
		skip_ws(&p);
		if (p.pos == len) return LM_OK;
		perr(&p, "unexpected text after the value", NULL);
	}
	char err[sizeof doc->err];
	bool nomem = doc->nomem;
	memcpy(err, doc->err, sizeof err);
	lmj_free(doc);
	memcpy(doc->err, err, sizeof err);
	doc->nomem = nomem;
	return nomem ? LM_ERR_NOMEM : LM_ERR_IO;
}

void lmj_free(lmj_doc *doc)
{
	if (doc->nodes) lm_free(doc->nodes, (size_t)doc->cap * sizeof(lmj_node));
	if (doc->pool) lm_free(doc->pool, doc->pool_cap);
	memset(doc, 0, sizeof *doc);
}

const char *lmj_type_name(lmj_type t)
{
	static const char *const names[] = {"null", "false", "true", "a number", "a string",
	                                    "an array", "an object"};
	return t <= LMJ_OBJECT ? names[t] : "?";
}
