// Drives the A2A endpoints of two `agcore serve --temporal` replicas with
// the A2A project's JavaScript SDK (@a2a-js/sdk, 0.3 line) and prints what
// it got as one JSON object. The Go test (TestE2EServeTemporalA2A) starts
// the replicas, the worker, a fake provider and a local webhook, runs this
// script in each mode, and checks the result.
//
// Environment: AGCORE_A2A_JS_DIR (where .ci/a2a-js-setup.sh installed the
// SDK), AGCORE_A and AGCORE_B (the replicas' base URLs; A may be gone),
// AGCORE_WEBHOOK (the local webhook's URL), TASK_ID, MODE:
//   send         a non-blocking message/send on A with a push config
//   resubscribe  tasks/resubscribe to TASK_ID on B to its end, then tasks/get
//   start        a non-blocking message/send on B (a turn that hangs), with
//                a push config when TOKEN is set (its token)
//   cancel       tasks/cancel of TASK_ID on B, then tasks/get
//   blocking     a blocking message/send on B
//   stream       a message/stream on B
//   ask          a blocking message/send on A whose turn calls a tool that
//                needs approval: the task input-required
//   decide       "approve" sent to TASK_ID (context CONTEXT_ID) on B
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_A2A_JS_DIR, 'package.json'));
const { ClientFactory } = require('@a2a-js/sdk/client');

const factory = new ClientFactory();
const card = (base) => factory.createFromUrl(base + '/a2a/agcore/.well-known/agent-card.json', '');
const message = (text) => ({ kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] });
const state = (ev) => ev?.status?.state ?? null;
const answer = (task) => (task?.artifacts ?? []).filter((x) => x.name === 'answer').flatMap((x) => x.parts).map((p) => p.text ?? '').join('');
const out = {};

switch (process.env.MODE) {
  case 'send': {
    const a = await card(process.env.AGCORE_A);
    const task = await a.sendMessage({
      message: message('record once'),
      configuration: { blocking: false, pushNotificationConfig: { url: process.env.AGCORE_WEBHOOK, token: 'tok-1' } },
    });
    out.kind = task.kind;
    out.taskId = task.id;
    out.state = state(task);
    break;
  }
  case 'resubscribe': {
    const b = await card(process.env.AGCORE_B);
    const states = [];
    for await (const ev of b.resubscribeTask({ id: process.env.TASK_ID })) {
      if (state(ev)) states.push(state(ev));
    }
    out.states = states;
    const done = await b.getTask({ id: process.env.TASK_ID });
    out.state = state(done);
    out.answer = answer(done);
    out.meta = done.metadata?.agcore ?? null;
    break;
  }
  case 'start': {
    const b = await card(process.env.AGCORE_B);
    const push = process.env.TOKEN ? { pushNotificationConfig: { url: process.env.AGCORE_WEBHOOK, token: process.env.TOKEN } } : {};
    const task = await b.sendMessage({ message: message('hang on'), configuration: { blocking: false, ...push } });
    out.taskId = task.id;
    out.state = state(task);
    break;
  }
  case 'cancel': {
    const b = await card(process.env.AGCORE_B);
    out.cancelled = state(await b.cancelTask({ id: process.env.TASK_ID }));
    out.got = state(await b.getTask({ id: process.env.TASK_ID }));
    break;
  }
  case 'blocking': {
    const b = await card(process.env.AGCORE_B);
    const task = await b.sendMessage({ message: message('answer me') });
    out.kind = task.kind;
    out.state = state(task);
    out.answer = answer(task);
    break;
  }
  case 'stream': {
    const b = await card(process.env.AGCORE_B);
    const kinds = [];
    let last = null;
    for await (const ev of b.sendMessageStream({ message: message('stream me') })) {
      kinds.push(ev.kind);
      last = ev;
    }
    out.kinds = kinds;
    out.state = state(last);
    out.answer = answer(last);
    break;
  }
  case 'ask': {
    const a = await card(process.env.AGCORE_A);
    const task = await a.sendMessage({ message: message('write a note') });
    out.taskId = task.id;
    out.contextId = task.contextId;
    out.state = state(task);
    out.approvals = (task.status?.message?.parts ?? []).filter((p) => p.kind === 'data').flatMap((p) => p.data.approvals ?? []);
    break;
  }
  case 'decide': {
    const b = await card(process.env.AGCORE_B);
    const m = { ...message('approve'), taskId: process.env.TASK_ID, contextId: process.env.CONTEXT_ID };
    const task = await b.sendMessage({ message: m });
    out.state = state(task);
    out.answer = answer(task);
    out.got = state(await b.getTask({ id: process.env.TASK_ID }));
    break;
  }
  default:
    throw new Error(`unknown MODE ${process.env.MODE}`);
}
console.log(JSON.stringify(out));
