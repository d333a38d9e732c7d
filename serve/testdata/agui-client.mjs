// Drives agcore serve's AG-UI endpoint with the protocol's TypeScript
// client (@ag-ui/client's HttpAgent, whose event verification rejects a
// stream out of order) and prints what it got as one JSON object. The Go
// test (cmd/agcore TestServeAGUI) starts the server and a fake provider.
//
// Environment: AGCORE_AGUI_CLIENT_DIR (where .ci/agui-client-setup.sh
// installed the client), AGCORE_BASE (the server's base URL).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_AGUI_CLIENT_DIR, 'package.json'));
const { HttpAgent } = require('@ag-ui/client');

const base = process.env.AGCORE_BASE;
const agent = new HttpAgent({ url: base + '/agui/agcore', threadId: 'thread-1', initialState: { topic: 'notes' } });
const out = {};

async function run(text, onEvent) {
  agent.messages.push({ id: crypto.randomUUID(), role: 'user', content: text });
  const events = [];
  const res = await agent.runAgent({ runId: crypto.randomUUID() }, {
    onEvent({ event }) {
      events.push(event.type);
      if (onEvent) onEvent(event);
    },
  });
  return {
    events,
    messages: res.newMessages.map((m) => ({ role: m.role, content: m.content ?? null, tools: (m.toolCalls ?? []).map((c) => c.function.name) })),
  };
}

// A run that calls a tool the server runs.
out.tool = await run('read the notes');
// The same thread: the session goes on.
out.next = await run('hello again');
// A call that needs approval: an interrupt the client answers.
const decided = [];
out.approval = await run('write the file', (event) => {
  if (event.type === 'CUSTOM' && event.name === 'agcore.approval_required') {
    decided.push(fetch(base + '/v1/approvals/' + encodeURIComponent(event.value.id), {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ approved: true }),
    }).then((r) => r.status));
  }
});
out.decided = await Promise.all(decided);
out.state = agent.state;

// A run the client leaves mid-answer goes on; a client pointed at the
// run's URL reconnects to it (its events replayed from RUN_STARTED).
const runId = crypto.randomUUID();
const leaving = new HttpAgent({ url: base + '/agui/agcore', threadId: 'thread-2' });
leaving.messages.push({ id: crypto.randomUUID(), role: 'user', content: 'slow story' });
try {
  await leaving.runAgent({ runId }, {
    onEvent({ event }) {
      if (event.type === 'TEXT_MESSAGE_CONTENT') leaving.abortRun();
    },
  });
  out.reconnect = { left: 'ended first' };
} catch (e) {
  out.reconnect = { left: String(e.name ?? e) };
}
if (!out.reconnect.left || out.reconnect.left === 'ended first') out.reconnect.left = out.reconnect.left || 'aborted';
await fetch(process.env.AGCORE_RELEASE, { method: 'POST' });
const back = new HttpAgent({ url: base + '/agui/agcore/runs/' + runId, threadId: 'thread-2' });
const events = [];
let text = '';
await back.runAgent({ runId }, {
  onEvent({ event }) {
    events.push(event.type);
    if (event.type === 'TEXT_MESSAGE_CONTENT') text += event.delta;
  },
});
out.reconnect.events = events;
out.reconnect.text = text;
console.log(JSON.stringify(out));
