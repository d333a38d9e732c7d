// Drives the approvals of agcore serve --temporal's AG-UI runs with the
// protocol's TypeScript client (@ag-ui/client's HttpAgent, whose event
// verification rejects a stream out of order) and prints what it got as
// one JSON object: a run reconnected to, from its start, on a replica
// that did not accept it (its interrupt event agcore.approval_required
// among the workflow's events), then a new run on that replica whose
// call that needs approval the client answers from the interrupt it
// receives (POST /v1/approvals/{id}), the run going on to its end. The Go
// test (TestE2EServeTemporalAGUIApprovals) starts the servers, the worker
// and a fake provider.
//
// Environment: AGCORE_AGUI_CLIENT_DIR (where .ci/agui-client-setup.sh
// installed the client), AGCORE_BASE (the replica's base URL), AGCORE_RUN
// (the run to reconnect to), AGCORE_TOKEN (the principal's bearer token).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_AGUI_CLIENT_DIR, 'package.json'));
const { HttpAgent } = require('@ag-ui/client');

const base = process.env.AGCORE_BASE;
const headers = { Authorization: 'Bearer ' + process.env.AGCORE_TOKEN };

async function run(agent, input, onInterrupt) {
  const events = [];
  const interrupts = [];
  const decisions = [];
  let text = '';
  await agent.runAgent(input, {
    onEvent({ event }) {
      events.push(event.type);
      if (event.type === 'TEXT_MESSAGE_CONTENT') text += event.delta;
      if (event.type === 'CUSTOM') {
        interrupts.push({ name: event.name, id: event.value.id, tool: event.value.tool, toolCallId: event.value.toolCallId });
        if (onInterrupt) decisions.push(onInterrupt(event));
      }
    },
  });
  return { events, text, interrupts, decisions: await Promise.all(decisions) };
}

const runId = process.env.AGCORE_RUN;
const out = {};
out.reconnect = await run(new HttpAgent({ url: base + '/agui/agcore/runs/' + runId, threadId: 'thread-' + runId, headers }), { runId });
const fresh = new HttpAgent({ url: base + '/agui/agcore', threadId: 'thread-fresh-' + runId, headers });
fresh.messages.push({ id: crypto.randomUUID(), role: 'user', content: 'write another' });
out.fresh = await run(fresh, { runId: 'fresh-' + runId }, async (event) => {
  if (event.name !== 'agcore.approval_required') return 0;
  const r = await fetch(base + '/v1/approvals/' + event.value.id, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ approved: true }),
  });
  return r.status;
});
console.log(JSON.stringify(out));
