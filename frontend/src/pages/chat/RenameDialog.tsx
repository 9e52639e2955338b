import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { Modal } from "../../components/Modal";

export function RenameDialog({ initial, onSave, onCancel }: { initial: string; onSave: (title: string) => void; onCancel: () => void }) {
  const { t } = useTranslation();
  const [title, setTitle] = useState(initial);
  const formId = useId();
  return (
    <Modal
      title={t("chat.renameTitle")}
      onClose={onCancel}
      size="small"
      footer={
        <>
          <button type="button" className="button" onClick={onCancel}>
            {t("common.cancel")}
          </button>
          <button type="submit" form={formId} className="button button--primary">
            {t("common.save")}
          </button>
        </>
      }
    >
      <form
        id={formId}
        onSubmit={(event) => {
          event.preventDefault();
          onSave(title.trim());
        }}
      >
        <label className="field">
          <span className="field__label">{t("chat.titleLabel")}</span>
          <input className="input" value={title} maxLength={200} onChange={(event) => setTitle(event.target.value)} data-autofocus />
        </label>
      </form>
    </Modal>
  );
}
