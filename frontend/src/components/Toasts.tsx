import { CircleAlert, CircleCheck, X } from "lucide-react";
import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

type ToastTone = "error" | "success";

interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  detail?: string;
}

interface ToastApi {
  /** A failure the user should read; `error` may be an `ApiError` (its message is the server's). Returns the toast's id. */
  error: (title: string, error?: unknown) => number;
  success: (title: string) => number;
  /** Take a toast away before its time, e.g. a failure that a later success made untrue. */
  dismiss: (id: number) => void;
}

const ToastContext = createContext<ToastApi | null>(null);

const SUCCESS_MS = 4000;
const ERROR_MS = 12000;

function detailOf(error: unknown): string | undefined {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  return undefined;
}

/** Short messages in a corner: successes fade, errors stay long enough to be read. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(1);

  const dismiss = useCallback((id: number) => {
    setToasts((current) => current.filter((toast) => toast.id !== id));
  }, []);

  const push = useCallback(
    (toast: Omit<Toast, "id">) => {
      const id = next.current++;
      setToasts((current) => [...current.slice(-3), { ...toast, id }]);
      window.setTimeout(() => dismiss(id), toast.tone === "error" ? ERROR_MS : SUCCESS_MS);
      return id;
    },
    [dismiss],
  );

  const api = useMemo<ToastApi>(
    () => ({
      error: (title, error) => push({ tone: "error", title, detail: detailOf(error) }),
      success: (title) => push({ tone: "success", title }),
      dismiss,
    }),
    [push, dismiss],
  );

  return (
    <ToastContext.Provider value={api}>
      {children}
      <div className="toasts" role="region" aria-label={t("toasts.label")}>
        {toasts.map((toast) => (
          <div key={toast.id} className={`toast toast--${toast.tone}`} role={toast.tone === "error" ? "alert" : "status"}>
            {toast.tone === "error" ? (
              <CircleAlert aria-hidden="true" size={18} className="toast__icon" />
            ) : (
              <CircleCheck aria-hidden="true" size={18} className="toast__icon" />
            )}
            <div className="toast__body">
              <p className="toast__title">{toast.title}</p>
              {toast.detail && <p className="toast__detail">{toast.detail}</p>}
            </div>
            <button
              type="button"
              className="icon-button"
              onClick={() => dismiss(toast.id)}
              aria-label={t("common.dismiss")}
            >
              <X aria-hidden="true" size={16} />
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): ToastApi {
  const toasts = useContext(ToastContext);
  if (!toasts) throw new Error("Trellis: useToast needs a <ToastProvider>.");
  return toasts;
}
