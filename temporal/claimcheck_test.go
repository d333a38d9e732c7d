package agtemporal_test

import (
	"context"
	"os"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

func TestClaimCheckMovesLargePayloadsOut(t *testing.T) {
	dir := t.TempDir()
	cc := &agtemporal.ClaimCheck{Store: agtemporal.FileBlobs{Dir: dir}, Threshold: 1024}
	small := &commonpb.Payload{Data: []byte("small")}
	big := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(strings.Repeat("x", 4096))}
	enc, err := cc.Encode([]*commonpb.Payload{small, big})
	if err != nil {
		t.Fatal(err)
	}
	if string(enc[0].Data) != "small" || len(enc[1].Data) > 100 {
		t.Fatalf("encoded sizes %d, %d", len(enc[0].Data), len(enc[1].Data))
	}
	dec, err := cc.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if string(dec[1].Data) != string(big.Data) || string(dec[1].Metadata["encoding"]) != "json/plain" {
		t.Fatal("the large payload did not come back")
	}
	// A blob changed behind the codec's back is refused.
	if err := os.WriteFile(dir+"/"+string(enc[1].Data), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Decode(enc); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("a tampered blob decoded: %v", err)
	}
}

func TestLargeToolResultTravelsByReference(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("line of a large file\n", 20000) // ~420 KiB
	h := newHarnessWith(t, func(o *agtemporal.Options) {
		o.MaxResultBytes = -1
		o.Tools = append(o.Tools, tool.MustFunc("cat", "Print a large file.", func(context.Context, struct{}) (string, error) { return huge, nil }))
	}, llmtest.Reply(llmtest.Call("c1", "cat", `{}`)), llmtest.Text("read it"))
	h.env.SetDataConverter((&agtemporal.ClaimCheck{Store: agtemporal.FileBlobs{Dir: dir}}).NewDataConverter())
	res, err := h.run(t, input("cat"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Transcript[1].Text() != huge {
		t.Fatal("the tool result changed on its way")
	}
	if req := h.model.Requests()[1]; req.Messages[len(req.Messages)-1].Text() != huge {
		t.Fatal("the model did not get the whole result")
	}
	blobs, _ := os.ReadDir(dir)
	if len(blobs) == 0 {
		t.Fatal("nothing was stored in the blob store")
	}
}
