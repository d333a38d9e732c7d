package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agcore/agcore/provider/demo"
)

func TestTheExampleHandsOverOffline(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &demo.Model{}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-- handed over: triage → billing --",
		"-- handed over: triage → tech_support --",
		"(answered by billing;",
		"(answered by tech_support;",
		"session customer-1: 2 turns, 8 messages",
		" 1 triage       This is a question for the billing agent",
		" 3 billing      I am agcore's scripted demo model",
		" 7 tech_support I am agcore's scripted demo model",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
