package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestExtractOnTheDemoModel(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var out bytes.Buffer
		if err := run(context.Background(), &out, "demo", "", defaultText, stream); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"name": "example name"`, `"urgency": "low"`, "name: example name, urgency: low, 1 topic(s)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("stream %v: output lacks %q:\n%s", stream, want, out.String())
			}
		}
		if stream != strings.Contains(out.String(), "partial: {") {
			t.Errorf("stream %v: partial lines:\n%s", stream, out.String())
		}
	}
}
