import { Search } from "lucide-react";
import { useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";

import type { CatalogComponent } from "../api/components";
import { groupByCategory } from "../catalog/categories";
import { ComponentIcon } from "./ComponentIcon";
import { childLimitLabel } from "./childLimits";
import { Modal } from "./Modal";

interface ComponentPickerProps {
  title: string;
  components: readonly CatalogComponent[];
  onPick: (component: CatalogComponent) => void;
  onClose: () => void;
}

function matches(component: CatalogComponent, query: string): boolean {
  const haystack = `${component.display_name} ${component.name} ${component.description}`.toLocaleLowerCase();
  return query.toLocaleLowerCase().split(/\s+/).filter(Boolean).every((word) => haystack.includes(word));
}

/** Choose a component: grouped by category, filtered as you type, arrow keys move between options. */
export function ComponentPicker({ title, components, onPick, onClose }: ComponentPickerProps) {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const searchId = useId();
  const list = useRef<HTMLDivElement>(null);
  const groups = useMemo(() => groupByCategory(components.filter((component) => matches(component, query))), [components, query]);

  const moveFocus = (event: KeyboardEvent, step: number) => {
    const options = [...(list.current?.querySelectorAll<HTMLButtonElement>(".picker__option") ?? [])];
    if (options.length === 0) return;
    event.preventDefault();
    const at = options.indexOf(document.activeElement as HTMLButtonElement);
    options[at < 0 ? 0 : (at + step + options.length) % options.length]?.focus();
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "ArrowDown") moveFocus(event, 1);
    else if (event.key === "ArrowUp") moveFocus(event, -1);
  };

  return (
    <Modal title={title} onClose={onClose} size="medium">
      <div className="picker" onKeyDown={onKeyDown}>
        <label htmlFor={searchId} className="visually-hidden">
          {t("picker.search")}
        </label>
        <div className="search-field">
          <Search aria-hidden="true" size={16} />
          <input
            id={searchId}
            className="input"
            type="search"
            placeholder={t("picker.search")}
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter") {
                const first = groups[0]?.components[0];
                if (first) onPick(first);
              }
            }}
            data-autofocus
          />
        </div>
        <div ref={list} className="picker__groups">
          {groups.length === 0 && <p className="muted">{t("picker.noMatch")}</p>}
          {groups.map((group) => (
            <section key={group.category} className="picker__group" aria-label={t(`categories.${group.category}`, { defaultValue: group.category })}>
              <h3 className="picker__category">{t(`categories.${group.category}`, { defaultValue: group.category })}</h3>
              <ul className="picker__options">
                {group.components.map((component) => {
                  const limits = childLimitLabel(t, component.min_children, component.max_children, component.composite);
                  return (
                    <li key={component.name}>
                      <button type="button" className="picker__option" onClick={() => onPick(component)}>
                        <span className="picker__icon">
                          <ComponentIcon name={component.icon} size={20} />
                        </span>
                        <span className="picker__text">
                          <span className="picker__name">{component.display_name}</span>
                          <span className="picker__description">{component.description}</span>
                          {limits && <span className="chip">{limits}</span>}
                        </span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            </section>
          ))}
        </div>
      </div>
    </Modal>
  );
}
