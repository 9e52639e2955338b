import type { IconButtonProps } from "@rjsf/utils";
import { TranslatableString } from "@rjsf/utils";
import { ArrowDown, ArrowUp, Copy, Plus, X, type LucideIcon } from "lucide-react";

/** rjsf's array buttons as labelled icon buttons (its defaults expect Bootstrap's glyph font). */
function iconButton(Icon: LucideIcon, label: TranslatableString, danger = false) {
  return function FormIconButton({ id, onClick, disabled, registry, className }: IconButtonProps) {
    const text = registry.translateString(label);
    return (
      <button
        id={id}
        type="button"
        className={`icon-button icon-button--small${danger ? " icon-button--danger" : ""} ${className ?? ""}`}
        onClick={onClick}
        disabled={disabled}
        aria-label={text}
        title={text}
      >
        <Icon aria-hidden="true" size={15} />
      </button>
    );
  };
}

function AddButton({ id, onClick, disabled, registry }: IconButtonProps) {
  return (
    <button id={id} type="button" className="button button--small" onClick={onClick} disabled={disabled}>
      <Plus aria-hidden="true" size={14} />
      {registry.translateString(TranslatableString.AddItemButton)}
    </button>
  );
}

export const BUTTON_TEMPLATES = {
  AddButton,
  CopyButton: iconButton(Copy, TranslatableString.CopyButton),
  MoveUpButton: iconButton(ArrowUp, TranslatableString.MoveUpButton),
  MoveDownButton: iconButton(ArrowDown, TranslatableString.MoveDownButton),
  RemoveButton: iconButton(X, TranslatableString.RemoveButton, true),
};
