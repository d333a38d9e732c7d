// The page: agent picker, session list, chat with streamed turns and
// approvals. Everything it fetches comes from this server's /api/.

import { APIError, events, getJSON, onTokenNeeded, request, sendJSON, setToken, token } from './api.js';
import { Transcript, budgetTexts, el, formatCost, formatTokens, usageText } from './render.js';
import { renderSessions } from './sessions.js';
import { watchApprovals } from './approvals.js';

const $ = (id) => document.getElementById(id);

let approvalsWatched = false;

const state = {
  agents: [],
  agent: '',
  session: '', // the open session's id; '' for a new chat
  abort: null, // the running turn's AbortController
  run: '', // the running turn's run id (its approvals are shown inline)
  next: '', // the cursor of the next page of sessions
  running: new Set(), // the ids of this agent's sessions with a turn running (in any tab or server)
  turns: 0, // the open session's stored turns
  fork: 0, // while editing an earlier message: the turn it begins (Send forks before it)
};

const SESSION_KEY = 'agcore-session'; // the open session, reopened after a reload

function remember(id) {
  if (id) sessionStorage.setItem(SESSION_KEY, state.agent + '\n' + id);
  else sessionStorage.removeItem(SESSION_KEY);
}

const transcript = new Transcript($('transcript'), (id, approved, content) =>
  sendJSON('POST', '/api/approvals/' + encodeURIComponent(id), { approved, reason: approved ? '' : 'denied from the web page', content }),
  (action, turn, text) => onFork(action, turn, text));

function status(text, isError) {
  const s = $('status');
  s.textContent = text || '';
  s.classList.toggle('error-text', !!isError);
}

function q(path) {
  return path + (path.includes('?') ? '&' : '?') + 'agent=' + encodeURIComponent(state.agent);
}

// --- token -----------------------------------------------------------------

function askToken(tried) {
  const dialog = $('token-dialog');
  $('token-why').textContent = tried
    ? 'The server refused that token. Enter another one.'
    : 'This server needs a bearer token. It is kept in this tab only (sessionStorage).';
  $('token-input').value = '';
  $('token-button').hidden = false;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const v = $('token-input').value.trim();
      resolve(dialog.returnValue === 'ok' && v ? v : null);
    }, { once: true });
    dialog.showModal();
  });
}
onTokenNeeded(askToken);

$('token-button').addEventListener('click', async () => {
  const t = await askToken(false);
  if (t) {
    setToken(t);
    await start();
  }
});

// --- agents and sessions ---------------------------------------------------

function currentAgent() {
  return state.agents.find((a) => a.name === state.agent);
}

function showAgentInfo() {
  const a = currentAgent();
  $('agent-info').textContent = a ? [a.model, a.description].filter(Boolean).join(' — ') : '';
}

async function loadSessions() {
  const ul = $('sessions');
  const a = currentAgent();
  if (!a || !a.sessions) {
    ul.replaceChildren();
    $('sessions-empty').hidden = false;
    $('sessions-empty').textContent = 'This agent keeps no sessions.';
    return;
  }
  try {
    const [{ sessions, next }, { runs }] = await Promise.all([getJSON(q('/api/sessions')), getJSON(q('/api/runs'))]);
    state.running = new Set((runs || []).map((r) => r.session));
    renderSessions(ul, sessions, state.session, { open: openSession, remove: deleteSession }, false, state.running);
    state.next = next || '';
    $('more-sessions').hidden = !state.next;
    $('sessions-empty').hidden = sessions.length > 0;
    $('sessions-empty').textContent = 'No sessions yet.';
  } catch (e) {
    status('Could not list sessions: ' + e.message, true);
  }
}

$('more-sessions').addEventListener('click', async () => {
  try {
    const { sessions, next } = await getJSON(q('/api/sessions?cursor=' + encodeURIComponent(state.next)));
    renderSessions($('sessions'), sessions, state.session, { open: openSession, remove: deleteSession }, true, state.running);
    state.next = next || '';
    $('more-sessions').hidden = !state.next;
  } catch (e) {
    status('Could not list sessions: ' + e.message, true);
  }
});

function showSessionBar(s) {
  const bar = $('session-bar');
  if (!s) {
    bar.textContent = 'New chat';
    bar.title = state.session;
    return;
  }
  const parts = [
    s.title || s.id,
    s.turns + (s.turns === 1 ? ' turn' : ' turns'),
    formatTokens(s.tokens) + ' tokens',
  ];
  if (s.cost_usd) parts.push(formatCost(s.cost_usd));
  bar.textContent = parts.join(' · ');
  bar.title = s.id;
}

async function openSession(id) {
  if (state.abort) return;
  let s = null;
  try {
    s = await getJSON(q('/api/sessions/' + encodeURIComponent(id)));
  } catch (e) {
    if (!(e instanceof APIError && e.status === 404 && state.running.has(id))) {
      status('Could not open the session: ' + e.message, true);
      return;
    }
    // Its first turn is still running: nothing is stored yet.
  }
  state.session = id;
  state.turns = (s && s.turns) || 0;
  state.fork = 0;
  remember(id);
  transcript.clear();
  for (const it of (s && s.items) || []) transcript.add(it);
  showSessionBar(s);
  status('');
  await loadSessions();
  if (state.running.has(id)) await attach(id);
}

// attach follows the turn running on session id (started by another tab,
// or by this page before a reload), from its first event.
async function attach(id) {
  const abort = new AbortController();
  state.abort = abort;
  setBusy(true);
  status('Working…');
  let res;
  try {
    res = await request('GET', q('/api/sessions/' + encodeURIComponent(id) + '/run'), undefined, abort.signal);
  } catch (e) {
    state.abort = null;
    setBusy(false);
    if (!(e instanceof APIError && e.status === 404)) status('Could not follow the running turn: ' + e.message, true);
    else status('');
    return;
  }
  await follow(res, abort);
}

async function deleteSession(id) {
  try {
    await request('DELETE', q('/api/sessions/' + encodeURIComponent(id)));
    if (state.session === id) newChat();
    await loadSessions();
    status('Session deleted.');
  } catch (e) {
    status('Could not delete the session: ' + e.message, true);
  }
}

function newChat() {
  if (state.abort) return;
  state.session = '';
  state.turns = 0;
  state.fork = 0;
  remember('');
  transcript.clear();
  showSessionBar(null);
  status('');
  for (const li of $('sessions').children) li.classList.remove('current');
  $('message').focus();
}

// --- chat --------------------------------------------------------------------

function setBusy(busy) {
  $('send').disabled = busy;
  $('stop').hidden = !busy;
  $('agent').disabled = busy;
  $('new-session').disabled = busy;
  document.body.classList.toggle('busy', busy);
}

async function send(text) {
  const abort = new AbortController();
  state.abort = abort;
  setBusy(true);
  status('Working…');
  // The turn this message begins, once stored: Edit and Regenerate fork
  // before it.
  transcript.add({ type: 'user', text, turn: currentAgent() && currentAgent().sessions ? state.turns + 1 : 0 });
  let res;
  try {
    res = await request('POST', '/api/chat', { agent: state.agent, session: state.session, message: text }, abort.signal);
  } catch (e) {
    transcript.add({ type: 'error', message: e instanceof APIError ? e.message : String(e) });
    status('The turn failed.', true);
    state.abort = null;
    setBusy(false);
    return;
  }
  await follow(res, abort);
}

// follow renders a turn's event stream (the chat's own, or a running
// turn's replayed and followed) to its end.
async function follow(res, abort) {
  let finished = false;
  try {
    for await (const ev of events(res)) {
      switch (ev.type) {
        case 'session':
          state.session = ev.session;
          state.run = ev.run;
          remember(ev.session);
          showSessionBar(null);
          break;
        case 'approval':
          status('Waiting for your approval of ' + ev.name + '…');
          break;
        case 'tool_result':
          status('Working…');
          break;
        case 'finish':
          finished = true;
          if (ev.session_turns) state.turns = ev.session_turns;
          if (ev.session_usage) {
            const n = ev.session_turns || 0;
            const parts = ['This session: ' + n + (n === 1 ? ' turn' : ' turns'), usageText(ev.session_usage)];
            if (ev.session_cost_usd) parts.push(formatCost(ev.session_cost_usd));
            parts.push(...budgetTexts(ev.budget));
            status(parts.join(' · '));
          } else {
            status([ev.message || '', ...budgetTexts(ev.budget)].filter(Boolean).join(' · '));
          }
          break;
        case 'error':
          finished = true;
          status('The turn failed.', true);
          break;
      }
      transcript.add(ev);
    }
    if (!finished) transcript.add({ type: 'error', message: 'the stream ended early' });
  } catch (e) {
    if (abort.signal.aborted) {
      transcript.add({ type: 'error', message: 'stopped; the turn was not stored' });
      status('');
    } else {
      transcript.add({ type: 'error', message: e instanceof APIError ? e.message : String(e) });
      status('The turn failed.', true);
    }
  } finally {
    state.abort = null;
    state.run = '';
    setBusy(false);
    await loadSessions();
    if (state.session) {
      try {
        showSessionBar(await getJSON(q('/api/sessions/' + encodeURIComponent(state.session))));
      } catch (_) { /* nothing stored (yet) */ }
    }
  }
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = $('message').value.trim();
  if (!text || state.abort) return;
  $('message').value = '';
  const fork = state.fork;
  state.fork = 0;
  if (fork) branch(fork, text);
  else send(text);
});

// --- branches ----------------------------------------------------------------

// onFork answers Edit and Regenerate on the user message that begins turn
// `turn`: Regenerate sends it again on a branch of the conversation before
// it; Edit puts it in the composer, and Send sends it there.
function onFork(action, turn, text) {
  if (state.abort) return;
  if (action === 'regenerate') {
    branch(turn, text);
    return;
  }
  state.fork = turn;
  $('message').value = text;
  $('message').focus();
  status('Editing message ' + turn + ': Send starts a branch of this conversation there (the original is kept).');
}

// branch sends text as turn `turn` of a new session holding the open
// session's turns before it (POST /api/sessions/{id}/fork); before the
// first turn, a new chat.
async function branch(turn, text) {
  if (turn <= 1 || !state.session) {
    newChat();
    await send(text);
    return;
  }
  let forked;
  try {
    forked = await sendJSON('POST', q('/api/sessions/' + encodeURIComponent(state.session) + '/fork'), { turns: turn - 1 });
  } catch (e) {
    status('Could not branch the conversation: ' + e.message, true);
    return;
  }
  await openSession(forked.session);
  await send(text);
}

$('message').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});

$('stop').addEventListener('click', async () => {
  if (!state.abort) return;
  // The turn outlives the page's connection: stop it on the server.
  if (state.session) {
    try {
      await request('POST', q('/api/sessions/' + encodeURIComponent(state.session) + '/cancel'), {});
    } catch (_) { /* it ended meanwhile, or this server keeps no turns: the abort below stops it */ }
  }
  if (state.abort) state.abort.abort();
});

$('new-session').addEventListener('click', newChat);

$('agent').addEventListener('change', async () => {
  state.agent = $('agent').value;
  showAgentInfo();
  newChat();
  await loadSessions();
});

// --- start -------------------------------------------------------------------

async function start() {
  try {
    const { agents } = await getJSON('/api/agents');
    state.agents = agents;
    const sel = $('agent');
    sel.replaceChildren();
    for (const a of agents) {
      const o = el('option', '', a.name);
      o.value = a.name;
      sel.append(o);
    }
    if (!agents.some((a) => a.name === state.agent)) state.agent = agents.length ? agents[0].name : '';
    sel.value = state.agent;
    if (token()) $('token-button').hidden = false;
    showAgentInfo();
    showSessionBar(null);
    status('');
    await loadSessions();
    // After a reload: the session that was open, and its running turn.
    const saved = (sessionStorage.getItem(SESSION_KEY) || '').split('\n');
    if (saved.length === 2 && saved[0] === state.agent && saved[1]) openSession(saved[1]);
    if (!approvalsWatched) {
      approvalsWatched = true;
      watchApprovals($('approvals-panel'), $('approvals'), () => state.run);
    }
    document.body.dataset.ready = '1';
  } catch (e) {
    status('Could not reach the server: ' + e.message, true);
  }
}

start();
