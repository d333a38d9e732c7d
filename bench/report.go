package bench

import (
	"fmt"
	"io"
	"strings"
)

// floorJSON returns the floor-json row of wire, or nil.
func (r *Result) floorJSON(wire Wire) *Row {
	name := "floor-json"
	if wire != WireOpenAI {
		name = "floor-json (" + wire.String() + ")"
	}
	for i := range r.Rows {
		if r.Rows[i].Library.Name == name {
			return &r.Rows[i]
		}
	}
	return nil
}

// headline returns the stream length the main table reports.
func (r *Result) headline() int { return r.Config.Sizes[len(r.Config.Sizes)-1] }

// Markdown writes the result as markdown: the main table, the per-size
// table, and the rows that are missing with the reason.
func (r *Result) Markdown(w io.Writer) error {
	c := r.Config
	big, small := r.headline(), c.Sizes[0]
	var b strings.Builder
	fmt.Fprintf(&b, "### Streaming cost per chunk, %s\n\n", r.Date.Format("2006-01-02"))
	fmt.Fprintf(&b, "Machine: %s (nproc %d). ", r.Machine, r.Machine.CPUs)
	fmt.Fprintf(&b, "CPU time of the client process (getrusage) and heap allocations per text chunk on %s-chunk streams from a local server in another process, median of %d interleaved round(s); "+
		"× floor-json is against the floor-json row of the same wire; flat is ns/chunk at %s chunks ÷ at %s (per-request costs included, so below 1 is normal). ",
		thousands(big), c.Rounds, thousands(big), thousands(small))
	if c.ConcStreams > 0 {
		fmt.Fprintf(&b, "Peak RSS per stream: %d concurrent streams of %d chunks paced %s, each library in a fresh process, (VmHWM − RSS before the streams) ÷ streams, median of %d round(s).",
			c.ConcStreams, c.ConcChunks, c.Pace, c.ConcRounds)
	}
	b.WriteString("\n\n")
	b.WriteString("| library | wire | ns/chunk | allocs/chunk | B/chunk | × floor-json | flat " + shortNum(small) + "→" + shortNum(big) + " | peak RSS/stream | RSS × floor-json |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range r.Rows {
		st, ok := row.Sizes[big]
		if !ok {
			continue
		}
		fj := r.floorJSON(row.Library.Wire)
		ratio, flat, rss, rssRatio := "–", "–", "–", "–"
		if fj != nil {
			if f, ok := fj.Sizes[big]; ok && f.NsPerChunk > 0 {
				ratio = fmt.Sprintf("%.2f", st.NsPerChunk/f.NsPerChunk)
			}
		}
		if s, ok := row.Sizes[small]; ok && s.NsPerChunk > 0 && small != big {
			flat = fmt.Sprintf("%.2f", st.NsPerChunk/s.NsPerChunk)
		}
		if row.Conc != nil {
			rss = kib(row.Conc.PerStream())
			if fj != nil && fj.Conc != nil && fj.Conc.PerStream() > 0 {
				rssRatio = fmt.Sprintf("%.2f", row.Conc.PerStream()/fj.Conc.PerStream())
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.1f | %.0f | %s | %s | %s | %s |\n",
			row.Library.Name, row.Library.Wire, st.NsPerChunk, st.AllocsPerChunk, st.BytesPerChunk, ratio, flat, rss, rssRatio)
	}

	b.WriteString("\nPer stream length (CPU ns / allocations per chunk):\n\n| library |")
	for _, n := range c.Sizes {
		fmt.Fprintf(&b, " %s chunks |", thousands(n))
	}
	b.WriteString("\n|---|")
	for range c.Sizes {
		b.WriteString("--:|")
	}
	b.WriteString("\n")
	for _, row := range r.Rows {
		if len(row.Sizes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s |", row.Library.Name)
		for _, n := range c.Sizes {
			if st, ok := row.Sizes[n]; ok {
				fmt.Fprintf(&b, " %.0f / %.1f |", st.NsPerChunk, st.AllocsPerChunk)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}

	if c.ConcStreams > 0 {
		fmt.Fprintf(&b, "\nConcurrency (%d streams × %d chunks, %s apart; median round):\n\n", c.ConcStreams, c.ConcChunks, c.Pace)
		b.WriteString("| library | RSS before | peak RSS | per stream | wall |\n|---|--:|--:|--:|--:|\n")
		for _, row := range r.Rows {
			if row.Conc == nil {
				continue
			}
			cr := row.Conc
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.Library.Name, mib(cr.BaselineRSS), mib(cr.PeakRSS), kib(cr.PerStream()), cr.Wall.Round(10e6))
		}
	}

	var missing []string
	for _, row := range r.Rows {
		if row.Err != "" {
			missing = append(missing, fmt.Sprintf("- %s: %s", row.Library.Name, row.Err))
		}
	}
	if len(missing) > 0 {
		b.WriteString("\nIncomplete rows:\n\n" + strings.Join(missing, "\n") + "\n")
	}
	b.WriteString("\nRows:\n\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "- %s: %s\n", row.Library.Name, row.Library.Note)
	}
	fmt.Fprintf(&b, "\nRun took %s.\n", r.Elapsed.Round(1e9))
	_, err := io.WriteString(w, b.String())
	return err
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func shortNum(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
