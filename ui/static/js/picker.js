// picker.js: choosing related objects by searching the server as you type. A select that
// loads every row cannot show an object past its first few thousand (and a form that
// sent back what it could not show would clear it); a picker asks the server for the
// first matches of what was typed (?q=), shows the current choice from the object
// itself, and keeps the chosen ids in hidden inputs named like the field, so a form
// reads it as it reads any input.

import { h, clear, refText } from './dom.js';
import { get, qs } from './api.js';

const PAGE = 20;
let uid = 0;

/** ipLabel shows an address with the device and interface it is on. */
export function ipLabel(ip) {
  const on = ip.assigned_object;
  if (!on) return ip.assigned_object_id === null ? `${ip.address} (unassigned)` : ip.address || refText(ip);
  return `${ip.address} — ${on.device ? `${on.device.name} · ` : ''}${on.name}`;
}

/** ifaceLabel shows an interface with its device. */
export const ifaceLabel = (i) => (i.device ? `${i.device.name} · ${i.name}` : refText(i));

// How objects of a list path read when the field does not say.
const LABELS = { '/api/ipam/ip-addresses/': ipLabel, '/api/dcim/interfaces/': ifaceLabel };

/**
 * refLabel is how a related object reads in a picker: ref.label(o) when the field
 * gives one, else its type's (an address with its device and interface), else its
 * display.
 */
export const refLabel = (ref, o) => (ref.label || LABELS[ref.path] || refText)(o);

/**
 * picker builds a search-as-you-type chooser. opts: name (of the hidden inputs), id (of
 * the text box, for its <label>), ref ({path, params, label}), many (a list), value (an
 * object or id, or a list of them), required, placeholder, empty (the text of no choice).
 * The returned element has .value() (an id, null, or a list of ids) and fires 'change'.
 */
export function picker({ name, id, ref, many = false, value, required = false, placeholder, empty = '— none —', describedBy }) {
  const listId = `pick${++uid}`;
  const chosen = new Map(); // id → label
  for (const v of many ? value || [] : value == null || value === '' ? [] : [value]) {
    const o = typeof v === 'object' ? v : { id: v };
    chosen.set(String(o.id), typeof v === 'object' ? refLabel(ref, o) : `#${o.id}`);
  }
  const hidden = h('span', { class: 'pick-values' });
  const chips = h('span', { class: 'chips pick-chips' });
  const box = h('input', {
    id, type: 'text', role: 'combobox', autocomplete: 'off', 'aria-autocomplete': 'list', 'aria-expanded': 'false',
    'aria-controls': listId, 'aria-describedby': describedBy, placeholder: placeholder || (many ? 'Type to search and add…' : 'Type to search…'),
  });
  const list = h('ul', { id: listId, role: 'listbox', class: 'pick-list', hidden: true });
  const clearBtn = h('button', { type: 'button', class: 'btn small pick-clear', 'aria-label': 'Clear', title: 'Clear' }, '×');
  const el = h('div', { class: `picker${many ? ' many' : ''}`, 'data-name': name }, hidden, many ? chips : null,
    h('div', { class: 'pick-row' }, box, many || required ? null : clearBtn), list);
  let results = [];
  let active = -1;
  let timer = 0;
  let seq = 0;

  const single = () => [...chosen.entries()][0];
  function render() {
    clear(hidden, [...chosen.keys()].map((k) => h('input', { type: 'hidden', name, value: k })));
    if (!chosen.size && !many) hidden.append(h('input', { type: 'hidden', name, value: '' }));
    if (many) {
      clear(chips, [...chosen.entries()].map(([k, label]) => h('span', { class: 'chip pick-chip' }, label, ' ',
        h('button', { type: 'button', class: 'linkish', 'aria-label': `Remove ${label}`, onclick: () => { chosen.delete(k); changed(); } }, '×'))));
    } else {
      box.value = chosen.size ? single()[1] : '';
      box.placeholder = chosen.size ? '' : placeholder || (required ? 'Type to search…' : `${empty} (type to search)`);
    }
  }
  function changed() {
    render();
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }
  function close() {
    list.hidden = true;
    box.setAttribute('aria-expanded', 'false');
    box.removeAttribute('aria-activedescendant');
    active = -1;
  }
  function highlight(i) {
    active = i;
    [...list.children].forEach((li, j) => li.setAttribute('aria-selected', String(j === i)));
    if (i >= 0 && list.children[i]) {
      box.setAttribute('aria-activedescendant', list.children[i].id);
      list.children[i].scrollIntoView({ block: 'nearest' });
    }
  }
  function choose(o) {
    if (!many) chosen.clear();
    chosen.set(String(o.id), refLabel(ref, o));
    if (many) box.value = '';
    close();
    changed();
  }
  async function search() {
    const mine = ++seq;
    const text = many || !chosen.size || box.value !== single()[1] ? box.value.trim() : '';
    let page;
    try {
      page = await get(ref.path + qs({ ...(ref.params || {}), q: text, limit: PAGE }));
    } catch (err) {
      if (mine === seq) clear(list, h('li', { class: 'pick-note', role: 'presentation' }, `Search failed: ${err.message}`));
      list.hidden = false;
      return;
    }
    if (mine !== seq) return; // a later keystroke's answer wins
    results = page.results;
    clear(list, results.map((o, i) => h('li', {
      id: `${listId}-${i}`, role: 'option', 'aria-selected': 'false', 'data-id': o.id,
      class: chosen.has(String(o.id)) ? 'is-chosen' : null,
      onmousedown: (e) => { e.preventDefault(); choose(o); },
    }, refLabel(ref, o))));
    if (!results.length) list.append(h('li', { class: 'pick-note', role: 'presentation' }, text ? `Nothing matches “${text}”.` : 'Nothing to choose.'));
    else if (page.count > results.length) list.append(h('li', { class: 'pick-note', role: 'presentation' }, `${page.count - results.length} more: type to narrow.`));
    list.hidden = false;
    box.setAttribute('aria-expanded', 'true');
    highlight(results.length ? 0 : -1);
  }
  const soon = () => { clearTimeout(timer); timer = setTimeout(search, 150); };

  box.addEventListener('input', soon);
  box.addEventListener('focus', () => { if (!many) box.select(); soon(); });
  box.addEventListener('blur', () => {
    clearTimeout(timer);
    close();
    // Typing without choosing changes nothing: the box shows the choice again. Emptying
    // it clears an optional choice.
    if (!many && box.value.trim() === '' && chosen.size && !required) { chosen.clear(); changed(); return; }
    if (!many) render();
  });
  box.addEventListener('keydown', (e) => {
    const open = !list.hidden;
    if (e.key === 'ArrowDown') { e.preventDefault(); if (!open) search(); else highlight(Math.min(active + 1, results.length - 1)); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); highlight(Math.max(active - 1, 0)); }
    else if (e.key === 'Enter' && open && active >= 0) { e.preventDefault(); choose(results[active]); }
    else if (e.key === 'Escape' && open) { e.preventDefault(); close(); if (!many) render(); }
    else if (e.key === 'Backspace' && many && box.value === '' && chosen.size) { chosen.delete([...chosen.keys()].pop()); changed(); }
  });
  clearBtn.addEventListener('click', () => { chosen.clear(); changed(); box.focus(); });

  el.value = () => {
    const ids = [...chosen.keys()].map(Number);
    return many ? ids : ids.length ? ids[0] : null;
  };
  el.input = box;
  render();
  return el;
}
