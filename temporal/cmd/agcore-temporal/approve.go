package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	agtemporal "github.com/agcore/agcore/temporal"
)

func newApproveCmd() *cobra.Command {
	var (
		c                       common
		sessionID, turnID, wfID string
		responseID              string
		deny, asJSON            bool
		reason, content         string
	)
	cmd := &cobra.Command{
		Use:   "approve (--session ID --turn ID | --response RESPONSE_ID | --workflow ID) [CALL_ID...]",
		Short: "List the tool calls a turn waits on, or approve or deny them",
		Long: `Without call ids, approve lists the calls the turn waits on (a query). With call
ids, it approves them, or denies them with --deny (an update the workflow
validates: an id the turn is not waiting on is refused). A denied call is an
error result the model reads; the turn goes on. --response addresses the turn
of a background response of agcore serve --temporal (its workflow
agcore-response/RESPONSE_ID). An MCP server's request for input (tool
mcp_elicitation, its arguments the requested schema) is approved with
--content, the form's answer as a JSON object, over the form's defaults; an
answer that does not fit the schema (a required field without a default left
out included) is refused, and the request goes on waiting.`,
		Example: `  agcore-temporal approve --session work --turn 20260105-143012.123-9f86
  agcore-temporal approve --session work --turn 20260105-143012.123-9f86 call_1
  agcore-temporal approve --session work --turn 20260105-143012.123-9f86 --deny --reason "not that file" call_1
  agcore-temporal approve --session work --turn 20260105-143012.123-9f86 --content '{"name":"Ada"}' elicitation-3-1
  agcore-temporal approve --response resp_work_3 call_1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id := wfID
			switch {
			case responseID != "" && (id != "" || turnID != ""):
				return usageError{errors.New("give one of --response, --turn (with --session) or --workflow")}
			case responseID != "":
				id = agtemporal.ResponseWorkflowID(responseID)
			case id == "":
				if turnID == "" {
					return usageError{errors.New("give --turn (with --session), --response or --workflow")}
				}
				id = agtemporal.TurnWorkflowID(sessionID, turnID)
			}
			cl, err := c.dial(ctx, slog.LevelWarn, "agcore")
			defer c.tracing.close()
			if err != nil {
				return err
			}
			defer cl.Close()
			if len(args) == 0 {
				p, err := agtemporal.Pending(ctx, cl, id)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(os.Stdout).Encode(p)
				}
				if len(p) == 0 {
					fmt.Println("no call is waiting for approval")
					return nil
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CALL ID\tTOOL\tWAITING\tARGUMENTS")
				for _, a := range p {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.CallID, a.Tool, time.Since(a.Since).Round(time.Second), a.Input)
				}
				return tw.Flush()
			}
			var answer string
			if content != "" {
				if deny {
					return usageError{errors.New("--content answers a request for input with an approval; not with --deny")}
				}
				if !json.Valid([]byte(content)) {
					return usageError{errors.New("--content is not JSON: give the form's answer as an object, e.g. '{\"name\":\"Ada\"}'")}
				}
				answer = content
			}
			for _, call := range args {
				if err := agtemporal.Decide(ctx, cl, id, agtemporal.Decision{CallID: call, Approve: !deny, Reason: reason, Content: answer}); err != nil {
					return err
				}
				verb := "approved"
				if deny {
					verb = "denied"
				}
				fmt.Printf("%s %s\n", verb, call)
			}
			return nil
		},
	}
	c.add(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&sessionID, "session", "s", "", "the turn's session")
	fs.StringVar(&turnID, "turn", "", "the turn id (printed by run)")
	fs.StringVar(&wfID, "workflow", "", "the turn's workflow id (instead of --session and --turn)")
	fs.StringVar(&responseID, "response", "", "the id of a background response of agcore serve --temporal, whose turn to address (instead of --session and --turn)")
	fs.BoolVar(&deny, "deny", false, "deny the calls instead of approving them")
	fs.StringVar(&reason, "reason", "", "the reason the model reads with a denial")
	fs.StringVar(&content, "content", "", "the answer to an MCP server's request for input (mcp_elicitation), a JSON object")
	fs.BoolVar(&asJSON, "json", false, "list the pending calls as JSON")
	return cmd
}
