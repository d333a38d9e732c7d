// Drives agcore serve --temporal's AG-UI endpoint with the protocol's
// TypeScript client (@ag-ui/client's HttpAgent, whose event verification
// rejects a stream out of order) and prints what it got as one JSON
// object: a run reconnected to on a replica that did not accept it (its
// events from RUN_STARTED, written by the workflow), then a new run on
// that replica (run by the workflow too). The Go test
// (TestE2EServeTemporalAGUISurvivesTheAcceptingReplica) starts the
// servers, the worker and a fake provider.
//
// Environment: AGCORE_AGUI_CLIENT_DIR (where .ci/agui-client-setup.sh
// installed the client), AGCORE_BASE (the replica's base URL), AGCORE_RUN
// (the run to reconnect to).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_AGUI_CLIENT_DIR, 'package.json'));
const { HttpAgent } = require('@ag-ui/client');

const base = process.env.AGCORE_BASE;

async function run(agent, input) {
  const events = [];
  let text = '';
  await agent.runAgent(input, {
    onEvent({ event }) {
      events.push(event.type);
      if (event.type === 'TEXT_MESSAGE_CONTENT') text += event.delta;
    },
  });
  return { events, text };
}

const runId = process.env.AGCORE_RUN;
const out = {};
out.reconnect = await run(new HttpAgent({ url: base + '/agui/agcore/runs/' + runId, threadId: 'thread-' + runId }), { runId });
const fresh = new HttpAgent({ url: base + '/agui/agcore', threadId: 'thread-fresh-' + runId });
fresh.messages.push({ id: crypto.randomUUID(), role: 'user', content: 'hello' });
out.fresh = await run(fresh, { runId: crypto.randomUUID() });
console.log(JSON.stringify(out));
