package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agcore/agcore/provider/demo"
)

func TestTheExampleAsksTwoSubAgentsOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &demo.Model{}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[asking historian]",
		"[asking critic]",
		"[historian answered call_1:",
		"[critic answered call_2:",
		"**historian**: I am agcore's scripted demo model",
		"**critic**: I am agcore's scripted demo model",
		"session study-1.call_1 (called by research in session study-1, call call_1): 2 messages",
		"session study-1.call_2 (called by research in session study-1, call call_2): 2 messages",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
