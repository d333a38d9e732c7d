// Drives agcore's Responses background mode with OpenAI's official Node
// SDK across two servers sharing a store, and prints what it got as one
// JSON object. The Go test (cmd/agcore TestServeBackgroundNodeSDK) starts
// the servers and a fake provider, runs this script in each mode, and
// checks the result.
//
// Environment: AGCORE_OPENAI_NODE_DIR (where .ci/openai-node-setup.sh
// installed the SDK), AGCORE_A and AGCORE_B (http://host:port/v1 of the two
// servers), AGCORE_MODEL, AGCORE_RELEASE (a URL whose POST lets the fake
// provider's "slow" answer go on), MODE:
//   resume  a streamed background turn dropped on A, resumed on B to its
//           end; polled on A; a background turn cancelled through B
//   start   a streamed background turn of a model that never ends, left
//           after its first text delta (the test then kills A): prints its
//           id and the last sequence number read
//   lost    resumes RESPONSE_ID after AFTER on B: prints the events and the
//           polled response
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_OPENAI_NODE_DIR, 'package.json'));
const { default: OpenAI } = require('openai');

const model = process.env.AGCORE_MODEL;
const a = new OpenAI({ baseURL: process.env.AGCORE_A, apiKey: 'none', maxRetries: 0 });
const b = new OpenAI({ baseURL: process.env.AGCORE_B, apiKey: 'none', maxRetries: 0 });
const out = {};

// events reads a stream to its end (or until stop says so).
async function events(stream, stop) {
  const got = [];
  for await (const ev of stream) {
    got.push(ev);
    if (stop && stop(ev)) break; // leaving the loop drops the connection
  }
  return got;
}

const brief = (evs) => evs.map((e) => ({ type: e.type, seq: e.sequence_number, delta: e.delta, status: e.response?.status, error: e.response?.error ?? null }));

switch (process.env.MODE) {
  case 'resume': {
    const first = await events(await a.responses.create({ model, input: 'slow story', background: true, stream: true }),
      (e) => e.type === 'response.output_text.delta');
    const id = first[0].response.id;
    out.created = { id, status: first[0].response.status, background: first[0].response.background };
    const after = first[first.length - 1].sequence_number;
    await fetch(process.env.AGCORE_RELEASE, { method: 'POST' }); // the model goes on while no client is attached
    const rest = await events(await b.responses.retrieve(id, { stream: true, starting_after: after }));
    out.first = brief(first);
    out.rest = brief(rest);
    const polled = await a.responses.retrieve(id);
    out.polled = { status: polled.status, text: polled.output_text, background: polled.background };
    const again = await events(await a.responses.retrieve(id, { stream: true, starting_after: 0 }));
    out.again = again.length;

    const bg = await a.responses.create({ model, input: 'hang on', background: true });
    out.queued = { status: bg.status, background: bg.background };
    const cancelled = await b.responses.cancel(bg.id);
    out.cancelled = { status: cancelled.status };
    out.cancelledPolled = (await a.responses.retrieve(bg.id)).status;
    break;
  }
  case 'start': {
    const first = await events(await a.responses.create({ model, input: 'hang on', background: true, stream: true, conversation: 'lostconv' }),
      (e) => e.type === 'response.output_text.delta');
    out.id = first[0].response.id;
    out.after = first[first.length - 1].sequence_number;
    break;
  }
  case 'lost': {
    const id = process.env.RESPONSE_ID;
    const rest = await events(await b.responses.retrieve(id, { stream: true, starting_after: Number(process.env.AFTER) }));
    out.rest = brief(rest);
    const polled = await b.responses.retrieve(id);
    out.polled = { status: polled.status, error: polled.error };
    break;
  }
  default:
    throw new Error(`unknown MODE ${process.env.MODE}`);
}
console.log(JSON.stringify(out));
