// Drives agcore's A2A endpoints with the A2A project's JavaScript SDK
// (@a2a-js/sdk, 0.3 line) across two servers sharing a store, and prints
// what it got as one JSON object. The Go test (cmd/agcore
// TestServeA2ABackground) starts the servers, a fake provider and a local
// webhook, runs this script in each mode, and checks the result.
//
// Environment: AGCORE_A2A_JS_DIR (where .ci/a2a-js-setup.sh installed the
// SDK), AGCORE_A and AGCORE_B (the servers' base URLs), AGCORE_WEBHOOK (the
// local webhook's URL), AGCORE_RELEASE (a URL whose POST lets the fake
// provider's "slow" answer go on), MODE:
//   run    a non-blocking message/send on A with a push config; push
//          configs set, got, listed and deleted on B, and one set on B
//          and kept; resubscribed on B to
//          the end; tasks/get on B; refused webhook URLs; a task running
//          on A cancelled through B; a new context from the task (a
//          message on B whose referenceTaskIds names it; the task
//          recorded its session turn, where the fork is made)
//   start  a non-blocking message/send on A of a turn that never ends:
//          prints its task id (the test then kills A)
//   lost   resubscribes to TASK_ID on B and prints the last state
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.AGCORE_A2A_JS_DIR, 'package.json'));
const { ClientFactory } = require('@a2a-js/sdk/client');

const factory = new ClientFactory();
// A is not asked for its card when it is gone (MODE lost).
const a = process.env.MODE === 'lost' ? null : await factory.createFromUrl(process.env.AGCORE_A + '/a2a/agcore/.well-known/agent-card.json', '');
const b = await factory.createFromUrl(process.env.AGCORE_B + '/a2a/agcore/.well-known/agent-card.json', '');
const out = {};

const message = (text) => ({ kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] });
const state = (ev) => ev?.status?.state ?? null;
async function caught(fn) {
  try {
    await fn();
    return 'ok';
  } catch (e) {
    return String(e.message ?? e);
  }
}

switch (process.env.MODE) {
  case 'run': {
    const card = await (await fetch(process.env.AGCORE_B + '/a2a/agcore/.well-known/agent-card.json')).json();
    out.pushCapability = card.capabilities?.pushNotifications ?? false;
    const task = await a.sendMessage({
      message: message('slow story'),
      configuration: { blocking: false, pushNotificationConfig: { url: process.env.AGCORE_WEBHOOK, token: 'tok-1' } },
    });
    out.sent = { kind: task.kind, state: state(task) };
    const id = task.id;
    out.taskId = id;
    const set = await b.setTaskPushNotificationConfig({ taskId: id, pushNotificationConfig: { id: 'second', url: process.env.AGCORE_WEBHOOK, token: 'tok-2' } });
    out.set = set.pushNotificationConfig.id;
    out.got = (await b.getTaskPushNotificationConfig({ id, pushNotificationConfigId: 'second' })).pushNotificationConfig.token;
    out.listed = (await b.listTaskPushNotificationConfig({ id })).length;
    await b.deleteTaskPushNotificationConfig({ id, pushNotificationConfigId: 'second' });
    out.listedAfterDelete = (await b.listTaskPushNotificationConfig({ id })).length;
    // A config set through B, kept: the turn running on A notifies it too.
    out.kept = (await b.setTaskPushNotificationConfig({ taskId: id, pushNotificationConfig: { id: 'kept', url: process.env.AGCORE_WEBHOOK, token: 'tok-3' } })).pushNotificationConfig.id;
    out.refused = {
      private: await caught(() => b.setTaskPushNotificationConfig({ taskId: id, pushNotificationConfig: { url: 'http://10.0.0.7/hook' } })),
      metadata: await caught(() => b.setTaskPushNotificationConfig({ taskId: id, pushNotificationConfig: { url: 'http://169.254.169.254/latest' } })),
      loopbackName: await caught(() => b.setTaskPushNotificationConfig({ taskId: id, pushNotificationConfig: { url: 'http://localhost:9/hook' } })),
    };
    await fetch(process.env.AGCORE_RELEASE, { method: 'POST' });
    const states = [];
    for await (const ev of b.resubscribeTask({ id })) {
      if (state(ev)) states.push(state(ev));
    }
    out.resubscribed = states;
    const done = await b.getTask({ id });
    out.final = {
      state: state(done),
      answer: (done.artifacts ?? []).flatMap((x) => x.parts).map((p) => p.text ?? '').join(''),
      sessionTurn: done.metadata?.agcore?.session_turn, // where a new context from it forks
    };

    // A new context from the task: its conversation up to the task, on B.
    const fork = await b.sendMessage({ message: { ...message('history please'), referenceTaskIds: [id] } });
    out.fork = {
      state: state(fork),
      newContext: fork.contextId !== done.contextId,
      answer: (fork.artifacts ?? []).flatMap((x) => x.parts).map((p) => p.text ?? '').join(''),
    };

    const hang = await a.sendMessage({ message: message('hang on'), configuration: { blocking: false } });
    const cancelled = await b.cancelTask({ id: hang.id });
    out.cancelled = state(cancelled);
    out.cancelledTask = hang.id;
    break;
  }
  case 'start': {
    const task = await a.sendMessage({ message: message('hang on'), configuration: { blocking: false } });
    out.taskId = task.id;
    out.state = state(task);
    break;
  }
  case 'lost': {
    let last = null;
    for await (const ev of b.resubscribeTask({ id: process.env.TASK_ID })) {
      if (state(ev)) last = state(ev);
    }
    out.last = last;
    out.got = state(await b.getTask({ id: process.env.TASK_ID }));
    break;
  }
  default:
    throw new Error(`unknown MODE ${process.env.MODE}`);
}
console.log(JSON.stringify(out));
