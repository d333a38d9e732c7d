// The form of an MCP server's request for input (an approval of the tool
// mcp_elicitation carries its requested schema): one labelled field per
// property (MCP allows flat forms: strings, numbers, booleans, a choice
// from an enum, several from an array's enum), each filled in with its
// default. Its answer goes with the approval as "content"; the server
// checks it against the schema and says which field does not fit.

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

let seq = 0;

/** Returns { node, read } for schema: read() is the answer as an object. */
export function schemaForm(schema) {
  const form = el('div', 'form');
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const readers = [];
  for (const name of Object.keys(props)) {
    const p = props[name] || {};
    const id = 'form-field-' + (++seq);
    const label = el('label', '', (p.title || name) + (required.has(name) ? ' *' : ''));
    label.htmlFor = id;
    const row = el('div', 'form-row');
    row.append(label);
    const choices = (p.enum || (p.oneOf || []).map((o) => o.const) || []).filter((v) => v !== undefined);
    const items = p.items || {};
    const many = (items.enum || (items.anyOf || []).map((o) => o.const) || []).filter((v) => v !== undefined);
    let input;
    let read;
    if (p.type === 'boolean') {
      input = el('input');
      input.type = 'checkbox';
      input.checked = p.default === true;
      read = () => input.checked;
    } else if (p.type === 'array' && many.length) {
      input = el('select');
      input.multiple = true;
      for (const v of many) {
        const o = el('option', '', String(v));
        o.value = String(v);
        o.selected = Array.isArray(p.default) && p.default.includes(v);
        input.append(o);
      }
      read = () => [...input.selectedOptions].map((o) => o.value);
    } else if (choices.length) {
      input = el('select');
      if (!required.has(name) || p.default === undefined) input.append(el('option', '', ''));
      for (const v of choices) {
        const o = el('option', '', String(v));
        o.value = String(v);
        o.selected = p.default === v;
        input.append(o);
      }
      read = () => (input.value === '' ? undefined : input.value);
    } else {
      input = el('input');
      input.type = p.type === 'number' || p.type === 'integer' ? 'number' : 'text';
      if (p.type === 'integer') input.step = '1';
      if (p.default !== undefined && p.default !== null) input.value = String(p.default);
      read = () => {
        const v = input.value;
        if (v === '') return undefined;
        if (p.type === 'number' || p.type === 'integer') {
          const n = Number(v);
          return Number.isNaN(n) ? v : n;
        }
        return v;
      };
    }
    input.id = id;
    input.name = name;
    row.append(input);
    if (p.description && p.description !== p.title) row.append(el('span', 'muted small', p.description));
    form.append(row);
    readers.push([name, read]);
  }
  return {
    node: form,
    read() {
      const out = {};
      for (const [name, read] of readers) {
        const v = read();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}
