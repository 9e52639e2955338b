import { useId } from "react";
import { useTranslation } from "react-i18next";

import { Modal } from "./Modal";

interface ConfirmDialogProps {
  title: string;
  message: string;
  confirmLabel: string;
  cancelLabel?: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function ConfirmDialog(props: ConfirmDialogProps) {
  const { t } = useTranslation();
  const messageId = useId();
  return (
    <Modal
      title={props.title}
      onClose={props.onCancel}
      size="small"
      describedBy={messageId}
      footer={
        <>
          <button type="button" className="button" onClick={props.onCancel} data-autofocus>
            {props.cancelLabel ?? t("common.cancel")}
          </button>
          <button
            type="button"
            className={`button ${props.danger ? "button--danger" : "button--primary"}`}
            onClick={props.onConfirm}
            disabled={props.busy}
          >
            {props.confirmLabel}
          </button>
        </>
      }
    >
      <p id={messageId}>{props.message}</p>
    </Modal>
  );
}
