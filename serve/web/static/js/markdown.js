// A small Markdown subset for the model's answers, built as DOM nodes:
// paragraphs, headings, bullet and numbered lists, fenced code blocks,
// inline `code`, **bold** and *emphasis*. Text only ever becomes text nodes
// (textContent), never HTML, so an answer cannot inject markup; links are
// left as plain text.

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const FENCE = /^\s*```\s*[\w+.-]*\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const ITEM = /^\s*(?:[-*+]|(\d{1,9})[.)])\s+(.*)$/;
const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)/g;

/** Replaces target's children with src rendered. */
export function renderMarkdown(target, src) {
  const frag = document.createDocumentFragment();
  const lines = src.split('\n');
  let para = null; // lines of the paragraph being read
  let list = null; // the list being filled
  const endPara = () => {
    if (para) {
      const p = el('p');
      inline(p, para.join('\n'));
      frag.append(p);
      para = null;
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (FENCE.test(line)) {
      endPara();
      list = null;
      const code = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      const pre = el('pre', 'code');
      pre.append(el('code', '', code.join('\n')));
      frag.append(pre);
      continue;
    }
    const h = line.match(HEADING);
    if (h) {
      endPara();
      list = null;
      const e = el('h' + Math.min(h[1].length + 2, 6), 'md-heading');
      inline(e, h[2]);
      frag.append(e);
      continue;
    }
    const it = line.match(ITEM);
    if (it) {
      endPara();
      const ordered = it[1] !== undefined;
      if (!list || (list.tagName === 'OL') !== ordered) {
        list = el(ordered ? 'ol' : 'ul');
        if (ordered && it[1] !== '1') list.start = Number(it[1]);
        frag.append(list);
      }
      const li = el('li');
      inline(li, it[2]);
      list.append(li);
      continue;
    }
    if (line.trim() === '') {
      endPara();
      list = null;
      continue;
    }
    if (list && /^\s+\S/.test(line)) { // a list item's continuation line
      list.lastChild.append(document.createTextNode('\n'));
      inline(list.lastChild, line.trim());
      continue;
    }
    list = null;
    (para ||= []).push(line);
  }
  endPara();
  target.replaceChildren(frag);
}

function inline(parent, text) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    const tok = m[0];
    if (m[1]) parent.append(el('code', '', tok.slice(1, -1)));
    else if (m[2]) parent.append(el('strong', '', tok.slice(2, -2)));
    else parent.append(el('em', '', tok.slice(1, -1)));
    last = m.index + tok.length;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}
