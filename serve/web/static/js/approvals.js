// The sidebar's list of calls waiting for this principal's approval that
// belong to turns the page is not showing (started from another tab or
// another client, such as the OpenAI-compatible API). The current turn's
// own calls are decided inline in the transcript.

import { getJSON, sendJSON } from './api.js';
import { el } from './render.js';
import { schemaForm } from './form.js';

const POLL_MS = 5000;

/**
 * Watches GET /api/approvals and renders the calls into ul (its panel is
 * shown only when there are some). ownRun() returns the run id of the
 * turn the page is streaming, whose calls are left out.
 */
export function watchApprovals(panel, ul, ownRun) {
  let timer = null;
  // The entries by approval id: one still waiting is kept as it is, so a
  // form being filled in survives the poll.
  const shown = new Map();

  async function refresh() {
    if (document.visibilityState !== 'visible') return;
    let list;
    try {
      ({ approvals: list } = await getJSON('/api/approvals'));
    } catch (_) {
      return; // shown again on the next poll
    }
    const run = ownRun();
    list = list.filter((a) => !run || !a.id.startsWith(run + '/'));
    const ids = new Set(list.map((a) => a.id));
    for (const [id, li] of shown) {
      if (!ids.has(id)) {
        li.remove();
        shown.delete(id);
      }
    }
    for (const a of list) {
      if (!shown.has(a.id)) {
        const li = entry(a, refresh);
        shown.set(a.id, li);
        ul.append(li);
      }
    }
    panel.hidden = list.length === 0;
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      await refresh();
      schedule();
    }, POLL_MS);
  }

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') refresh();
  });
  refresh().then(schedule);
  return refresh;
}

function entry(a, refresh) {
  const li = el('li', 'pending-call');
  const head = el('div', 'pending-head');
  head.append(el('span', 'tool-name', a.tool));
  const where = [a.agent, a.session].filter(Boolean).join(' · ');
  if (where) head.append(el('span', 'muted small', where));
  const asks = a.tool === 'mcp_elicitation'; // an MCP server's form
  const args = asks ? el('div', '', (a.input && a.input.message) || 'An MCP server asks for input.') : el('pre', '', JSON.stringify(a.input, null, 2));
  const form = asks ? schemaForm(a.schema) : null;
  const buttons = el('div', 'approval');
  const approve = el('button', 'primary approve', asks ? 'Send' : 'Approve');
  const deny = el('button', 'danger deny', asks ? 'Decline' : 'Deny');
  approve.type = deny.type = 'button';
  const decide = async (ok) => {
    approve.disabled = deny.disabled = true;
    try {
      await sendJSON('POST', '/api/approvals/' + encodeURIComponent(a.id),
        { approved: ok, reason: ok ? '' : 'denied from the web page', content: ok && form ? form.read() : undefined });
    } catch (e) {
      // A form's answer that does not fit stays on screen with the reason.
      approve.disabled = deny.disabled = false;
      buttons.append(el('div', 'error', 'Could not decide: ' + e.message));
      return;
    }
    await refresh();
  };
  approve.addEventListener('click', () => decide(true));
  deny.addEventListener('click', () => decide(false));
  buttons.append(approve, deny);
  li.append(head, args);
  if (form) li.append(form.node);
  li.append(buttons);
  return li;
}
