package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestTheExampleRunsThreeTurnsAndReloadsThem(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"session trip-1: 3 turns, 8 messages",
		` 1 assistant   [call get_weather {"city":"Paris"}]`,
		" 2 tool_result sunny, 18°C",
		" 7 assistant   You asked about Paris.",
		"usage: 1100 input (512 cached) + 40 output tokens",
		"prompt-cache prefix: 3 requests, 2 extended the previous one",
		"profile state: 3 turns",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
