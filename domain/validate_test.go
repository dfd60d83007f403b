package domain

import (
	"strings"
	"testing"
)

func TestNameRefusesControlAndBidiCharacters(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"NUL", "a\x00b"},
		{"escape", "a\x1b[31mb"},
		{"newline", "a\nb"},
		{"CR LF", "a\r\nb"},
		{"tab", "a\tb"},
		{"DEL", "a\x7fb"},
		{"C1 control NEL", "a\u0085b"},
		{"line separator", "a\u2028b"},
		{"paragraph separator", "a\u2029b"},
		{"LRE", "a\u202ab"}, {"RLE", "a\u202bb"}, {"PDF", "a\u202cb"}, {"LRO", "a\u202db"}, {"RLO", "a\u202eb"},
		{"LRI", "a\u2066b"}, {"RLI", "a\u2067b"}, {"FSI", "a\u2068b"}, {"PDI", "a\u2069b"},
		{"invalid UTF-8", "a\xffb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CleanName("title", c.in)
			if err == nil {
				t.Fatalf("name(%q) = %q, want an error", c.in, got)
			}
			wantCode(t, "name", err, EINVALID)
		})
	}
}

func TestNameIsTrimmedAndNFC(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"NFD e acute is composed", "Caf\u0065\u0301", "Caf\u00e9"},
		{"NFD Angstrom is composed", "A\u030angstr\u00f6m", "\u00c5ngstr\u00f6m"},
		{"already NFC stays", "Zo\u00eb", "Zo\u00eb"},
		{"fullwidth is kept (NFC, not NFKC)", "\uff21", "\uff21"},
		{"surrounding white space is trimmed", "\t Title \n", "Title"},
		{"a zero-width joiner in an emoji sequence is kept", "\U0001F468\u200d\U0001F4BB", "\U0001F468\u200d\U0001F4BB"},
		{"right-to-left text without controls", "\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CleanName("name", c.in)
			if err != nil || got != c.want {
				t.Fatalf("name(%q) = %q, %v, want %q", c.in, got, err, c.want)
			}
		})
	}
	t.Run("length counts the NFC form", func(t *testing.T) {
		in := strings.Repeat("e\u0301", MaxNameLen) // 400 runes in NFD, 200 in NFC
		got, err := CleanName("name", in)
		if err != nil || got != strings.Repeat("\u00e9", MaxNameLen) {
			t.Fatalf("name(200 x NFD e acute) = %q, %v", got, err)
		}
	})
}

func TestTextAllowsTabNewlineAndCRLFOnly(t *testing.T) {
	for _, in := range []string{"line 1\nline 2", "line 1\r\nline 2", "a\tb", "\u202eright-to-left override in a long text"} {
		got, err := CleanText("body", &in)
		if err != nil || got == nil || *got != in {
			t.Errorf("text(%q) = %v, %v, want it kept", in, got, err)
		}
	}
	for _, in := range []string{"a\x00b", "a\rb", "a\r", "a\r\rb", "a\x1bb", "a\x7fb", "a\u0085b", "a\x0bb", "a\x0cb"} {
		in := in + " end"
		got, err := CleanText("body", &in)
		if err == nil {
			t.Errorf("text(%q) = %q, want an error", in, *got)
			continue
		}
		wantCode(t, "text", err, EINVALID)
	}
}

func TestEmailRefusesControlCharacters(t *testing.T) {
	for _, in := range []string{"a\x00@example.com", "a@exa\x1bmple.com", "a\u202e@example.com", "a@example.com\u0085x", "a\xff@example.com"} {
		got, err := CleanEmail(&in)
		if err == nil {
			t.Errorf("email(%q) = %q, want an error", in, *got)
			continue
		}
		wantCode(t, "email", err, EINVALID)
	}
}
