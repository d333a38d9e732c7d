// Rendering of a conversation: the live stream's events and a stored
// transcript's items take the same shapes. Model and tool output only ever
// reaches the page through textContent, never as HTML.

import { renderMarkdown } from './markdown.js';
import { schemaForm } from './form.js';

/** Creates an element with a class and text. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

export function formatTokens(n) {
  return (n || 0).toLocaleString('en-US');
}

export function formatCost(c) {
  if (c === undefined || c === null) return '';
  if (c === 0) return '$0';
  return '$' + (c < 0.01 ? c.toFixed(5) : c.toFixed(3));
}

export function usageText(u) {
  if (!u) return '';
  let s = formatTokens(u.input_tokens) + ' in · ' + formatTokens(u.output_tokens) + ' out';
  if (u.cached_input_tokens) s += ' (' + formatTokens(u.cached_input_tokens) + ' cached)';
  return s;
}

// budgetTexts shows what is left of a turn's spending limits (the finish
// event's budget): one text per scope that has limits.
export function budgetTexts(b) {
  if (!b) return [];
  const out = [];
  for (const [scope, label] of [['run', 'turn'], ['session', 'session'], ['principal', 'quota']]) {
    const l = b[scope];
    if (!l) continue;
    const parts = [];
    if (l.cost_usd !== undefined) parts.push(formatCost(l.cost_usd));
    if (l.tokens !== undefined) parts.push(formatTokens(l.tokens) + ' tokens');
    if (l.input_tokens !== undefined) parts.push(formatTokens(l.input_tokens) + ' input tokens');
    if (l.output_tokens !== undefined) parts.push(formatTokens(l.output_tokens) + ' output tokens');
    if (parts.length) out.push(label + ' budget left: ' + parts.join(', '));
  }
  return out;
}

function prettyJSON(v) {
  if (v === undefined) return '';
  try {
    return JSON.stringify(v, null, 2);
  } catch (_) {
    return String(v);
  }
}

/**
 * Transcript renders items into a container. onDecide(approvalID, approved,
 * content) is called when the user clicks Approve or Deny (content: the
 * answer to an MCP server's form, with an approval of mcp_elicitation) and
 * resolves once the server took the decision. onFork(action, turn, text), when given, is
 * called when the user clicks Edit ('edit') or Regenerate ('regenerate')
 * on a user message that begins turn `turn`.
 */
export class Transcript {
  constructor(root, onDecide, onFork) {
    this.root = root;
    this.onDecide = onDecide;
    this.onFork = onFork;
    this.clear();
  }

  clear() {
    this.root.replaceChildren();
    this.turn = null; // the current assistant turn's element
    this.block = null; // the text or thinking element being appended to
    this.blockType = '';
    this.tools = new Map(); // tool call id → card
    this.footer = null;
  }

  scroll() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  assistant() {
    if (!this.turn) {
      this.turn = el('div', 'msg assistant');
      this.turn.append(el('div', 'who', 'agent'));
      this.root.append(this.turn);
    }
    return this.turn;
  }

  /** Renders one item (see serve/web/doc.go for the shapes). */
  add(ev) {
    switch (ev.type) {
      case 'user': {
        this.turn = null;
        this.block = null;
        const m = el('div', 'msg user');
        m.append(el('div', 'who', 'you'), el('div', 'body', ev.text));
        if (ev.turn && this.onFork) {
          // A branch of the conversation before this turn: the original stays.
          const actions = el('div', 'msg-actions');
          for (const [action, label] of [['edit', 'Edit'], ['regenerate', 'Regenerate']]) {
            const b = el('button', 'ghost small ' + action, label);
            b.type = 'button';
            b.dataset.turn = String(ev.turn);
            b.addEventListener('click', () => this.onFork(action, ev.turn, ev.text));
            actions.append(b);
          }
          m.append(actions);
        }
        this.root.append(m);
        break;
      }
      case 'text':
      case 'thinking':
        this.appendText(ev.type, ev.text || '');
        break;
      case 'tool_call':
        this.toolCall(ev);
        break;
      case 'approval':
        this.approval(ev);
        break;
      case 'tool_result':
        this.toolResult(ev);
        break;
      case 'usage':
        this.setFooter(usageText(ev.usage) + ' …', false);
        break;
      case 'handoff':
        this.handoff(ev);
        break;
      case 'sub_agent':
        this.subAgent(ev);
        break;
      case 'finish':
        this.finish(ev);
        break;
      case 'error':
        this.assistant().append(el('div', 'error', ev.message || 'error'));
        this.block = null;
        break;
      default:
        return;
    }
    this.scroll();
  }

  appendText(type, text) {
    const turn = this.assistant();
    if (this.blockType !== type || !this.block) {
      if (type === 'thinking') {
        const d = el('details', 'thinking');
        d.open = true;
        d.append(el('summary', '', 'Thinking'));
        this.block = el('div', 'thinking-text');
        d.append(this.block);
        turn.append(d);
      } else {
        // a thinking block closes once the answer starts
        const open = turn.querySelector('details.thinking[open]');
        if (open) open.open = false;
        this.block = el('div', 'body text');
        turn.append(this.block);
      }
      this.blockType = type;
      this.raw = '';
    }
    if (type === 'thinking') {
      this.block.append(document.createTextNode(text));
    } else {
      this.raw += text;
      renderMarkdown(this.block, this.raw);
    }
  }

  toolCall(ev) {
    this.block = null;
    const card = el('div', 'tool');
    card.dataset.id = ev.id || '';
    const head = el('div', 'tool-head');
    head.append(el('span', 'tool-icon', '⚙'), el('span', 'tool-name', ev.name), el('span', 'tool-state muted', 'running…'));
    const args = el('details', 'tool-args');
    args.append(el('summary', '', 'arguments'), el('pre', '', prettyJSON(ev.input)));
    card.append(head, args);
    this.assistant().append(card);
    if (ev.id) this.tools.set(ev.id, card);
  }

  card(id) {
    let card = this.tools.get(id);
    if (!card) { // a result or approval whose call was not seen
      this.toolCall({ id, name: 'tool', input: undefined });
      card = this.tools.get(id);
    }
    return card;
  }

  setState(card, text, cls) {
    const s = card.querySelector('.tool-state');
    s.textContent = text;
    s.className = 'tool-state ' + (cls || 'muted');
  }

  approval(ev) {
    // An MCP server's request for input (mcp_elicitation) has no call of
    // its own in the transcript: its card is made here, with its form.
    const asks = ev.name === 'mcp_elicitation';
    if (asks && !this.tools.get(ev.tool_call_id)) this.toolCall({ id: ev.tool_call_id, name: ev.name, input: ev.input });
    const card = this.card(ev.tool_call_id);
    this.setState(card, asks ? 'asks for input' : 'needs approval', 'warn');
    card.classList.add('pending');
    const box = el('div', 'approval');
    const form = asks ? schemaForm(ev.schema) : null;
    const question = asks ? ((ev.input && ev.input.message) || 'An MCP server asks for input.') : 'Run ' + (ev.name || 'this tool') + ' with these arguments?';
    if (!asks) box.append(el('span', '', question));
    const approve = el('button', 'primary approve', asks ? 'Send' : 'Approve');
    const deny = el('button', 'danger deny', asks ? 'Decline' : 'Deny');
    approve.type = deny.type = 'button';
    let failure = null;
    const decide = async (ok) => {
      approve.disabled = deny.disabled = true;
      try {
        await this.onDecide(ev.id, ok, ok && form ? form.read() : undefined);
        box.replaceChildren(el('span', ok ? 'ok' : 'warn', asks ? (ok ? 'Sent' : 'Declined') : (ok ? 'Approved' : 'Denied')));
        if (form) form.node.remove(); // the question stays, with what was done
        card.classList.remove('pending');
        if (asks) this.setState(card, ok ? 'answered' : 'declined', ok ? 'ok' : 'warn');
        else if (!card.querySelector('.tool-result')) { // the result may have come first
          this.setState(card, ok ? 'running…' : 'denied', ok ? 'muted' : 'warn');
        }
      } catch (e) {
        approve.disabled = deny.disabled = false;
        if (failure) failure.remove();
        failure = el('div', 'error', 'Could not decide: ' + e.message);
        box.append(failure);
      }
    };
    approve.addEventListener('click', () => decide(true));
    deny.addEventListener('click', () => decide(false));
    box.append(approve, deny);
    if (form) card.append(el('div', 'form-question', question), form.node);
    card.append(box);
    card.querySelector('.tool-args').open = !asks;
  }

  toolResult(ev) {
    const card = this.card(ev.tool_call_id);
    const box = card.querySelector('.approval');
    if (box && box.querySelector('button')) box.remove(); // decided elsewhere
    card.classList.remove('pending');
    this.setState(card, ev.is_error ? 'error' : 'done', ev.is_error ? 'warn' : 'ok');
    const res = el('pre', 'tool-result' + (ev.is_error ? ' is-error' : ''), ev.text || '');
    card.append(res);
    this.block = null;
  }

  /** A handoff: a divider naming both agents; what follows is the new agent's. */
  handoff(ev) {
    const turn = this.assistant();
    turn.append(el('div', 'handoff small muted', '↪ ' + (ev.from || 'agent') + ' handed the conversation to ' + (ev.agent || 'another agent')));
    turn.append(el('div', 'who', ev.agent || 'agent'));
    this.block = null;
  }

  /**
   * A sub-agent's event, shown inside the card of the tool call that runs
   * it: its text as it streams, its own tool calls and results as lines.
   */
  subAgent(ev) {
    const card = this.card(ev.tool_call_id);
    let box = card.querySelector(':scope > details.sub-agent');
    if (!box) {
      box = el('details', 'sub-agent');
      box.open = true;
      box.append(el('summary', '', (ev.agent || 'sub-agent') + ' is working'));
      card.append(box);
    }
    const sub = ev.sub || {};
    let last = box.lastElementChild;
    switch (sub.type) {
      case 'text':
      case 'thinking':
        if (!last || !last.classList.contains('sub-' + sub.type)) {
          last = el('div', 'sub-' + sub.type);
          box.append(last);
        }
        last.append(document.createTextNode(sub.text || ''));
        break;
      case 'tool_call':
        box.append(el('div', 'sub-line small muted', '⚙ ' + (sub.name || 'tool')));
        break;
      case 'tool_result':
        box.append(el('div', 'sub-line small' + (sub.is_error ? ' warn' : ' muted'), '→ ' + (sub.text || '').slice(0, 200)));
        break;
      case 'handoff':
        box.append(el('div', 'sub-line small muted', '↪ ' + sub.from + ' → ' + sub.agent));
        break;
    }
  }

  setFooter(text, final) {
    const turn = this.assistant();
    if (!this.footer || this.footer.parentNode !== turn) {
      this.footer = el('div', 'turn-usage small muted');
      turn.append(this.footer);
    }
    turn.append(this.footer); // keep it last
    this.footer.textContent = text;
    this.footer.classList.toggle('final', final);
  }

  finish(ev) {
    const parts = [usageText(ev.usage)];
    if (ev.cost_usd !== undefined) parts.push(formatCost(ev.cost_usd));
    if (ev.finish_reason && ev.finish_reason !== 'stop') parts.push(ev.finish_reason);
    parts.push(...budgetTexts(ev.budget));
    if (ev.message) parts.push(ev.message);
    this.setFooter(parts.join(' · '), true);
    this.turn = null;
    this.block = null;
  }
}
