// The session list in the sidebar.

import { el, formatCost, formatTokens } from './render.js';

function when(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const today = new Date();
  if (d.toDateString() === today.toDateString()) {
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }
  return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

/**
 * Renders sessions into ul. handlers.open(id) and handlers.remove(id) are
 * called on a click; current is the open session's id. With more, the
 * sessions are added after those already listed (the next page). running
 * holds the ids of the sessions with a turn running: they carry a badge.
 */
export function renderSessions(ul, sessions, current, handlers, more = false, running = new Set()) {
  if (!more) ul.replaceChildren();
  for (const s of sessions) {
    const li = el('li', 'session' + (s.id === current ? ' current' : '') + (running.has(s.id) ? ' running' : ''));
    li.dataset.id = s.id;
    const open = el('button', 'session-open');
    open.type = 'button';
    open.title = s.id;
    const title = el('span', 'session-title', s.title || '(untitled)');
    if (running.has(s.id)) {
      const badge = el('span', 'session-running', '● running');
      badge.title = 'A turn of this session is running (open it to follow it)';
      title.prepend(badge, ' ');
    }
    open.append(title);
    const meta = [
      s.model,
      s.turns + (s.turns === 1 ? ' turn' : ' turns'),
      formatTokens(s.tokens) + ' tok',
    ];
    if (s.cost_usd) meta.push(formatCost(s.cost_usd));
    meta.push(when(s.updated_at));
    open.append(el('span', 'session-meta', meta.filter(Boolean).join(' · ')));
    open.addEventListener('click', () => handlers.open(s.id));
    const del = el('button', 'session-delete ghost', '✕');
    del.type = 'button';
    del.title = 'Delete this session';
    del.setAttribute('aria-label', 'Delete session ' + (s.title || s.id));
    del.addEventListener('click', () => handlers.remove(s.id));
    li.append(open, del);
    ul.append(li);
  }
}
