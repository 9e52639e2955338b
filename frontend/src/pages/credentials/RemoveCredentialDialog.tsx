import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { deleteCredential, type Credential } from "../../api/credentials";
import { Modal } from "../../components/Modal";
import { useToast } from "../../components/Toasts";
import { UsedByList } from "./UsedByList";

interface RemoveCredentialDialogProps {
  credential: Credential;
  onDone: () => void;
  onClose: () => void;
}

/** Remove a credential; when pipelines use it, say which and that they will stop working. */
export function RemoveCredentialDialog({ credential, onDone, onClose }: RemoveCredentialDialogProps) {
  const { t } = useTranslation();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const messageId = useId();
  const inUse = credential.used_by.length > 0;

  const remove = async () => {
    setBusy(true);
    try {
      // The dialog has shown what uses it: confirming is the user's decision to remove it anyway.
      await deleteCredential(credential.id, inUse);
      onDone();
    } catch (error) {
      toast.error(t("credentials.removeFailed", { name: credential.name }), error);
      setBusy(false);
    }
  };

  return (
    <Modal
      title={t("credentials.removeTitle", { name: credential.name })}
      onClose={onClose}
      size="small"
      describedBy={messageId}
      footer={
        <>
          <button type="button" className="button" onClick={onClose} data-autofocus>
            {t("common.cancel")}
          </button>
          <button type="button" className="button button--danger" onClick={() => void remove()} disabled={busy}>
            {inUse ? t("credentials.removeAnyway") : t("credentials.remove")}
          </button>
        </>
      }
    >
      <div id={messageId} className="stack">
        {inUse ? (
          <>
            <p className="notice notice--warning">{t("credentials.removeInUse", { count: credential.used_by.length })}</p>
            <UsedByList uses={credential.used_by} />
          </>
        ) : (
          <p>{t("credentials.removeMessage")}</p>
        )}
      </div>
    </Modal>
  );
}
