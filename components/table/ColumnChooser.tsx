"use client";

/** A popover of column checkboxes, with "defaults" and "all" shortcuts. */
export function ColumnChooser({
  all,
  visible,
  defaults,
  onChange,
}: {
  all: readonly string[];
  visible: readonly string[];
  defaults: readonly string[];
  onChange: (next: string[]) => void;
}) {
  // A column switched on goes before the first shown column that follows it in `all`,
  // so the current (e.g. default) order is kept.
  const toggle = (id: string) => {
    if (visible.includes(id)) return onChange(visible.filter((c) => c !== id));
    const at = all.indexOf(id);
    const before = visible.findIndex((c) => all.indexOf(c) > at);
    onChange(before < 0 ? [...visible, id] : [...visible.slice(0, before), id, ...visible.slice(before)]);
  };
  return (
    <details className="dt-chooser">
      <summary className="rv-btn">
        Columns {visible.length}/{all.length}
      </summary>
      <div className="dt-chooser-pop" role="group" aria-label="Visible columns">
        <div className="dt-chooser-actions">
          <button type="button" className="rv-btn" onClick={() => onChange([...defaults])}>
            defaults
          </button>
          <button type="button" className="rv-btn" onClick={() => onChange([...all])}>
            all
          </button>
        </div>
        {all.map((id) => (
          <label key={id} className="dt-chooser-item">
            <input type="checkbox" checked={visible.includes(id)} onChange={() => toggle(id)} disabled={visible.length === 1 && visible.includes(id)} /> {id}
          </label>
        ))}
      </div>
    </details>
  );
}
