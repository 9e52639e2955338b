import { LogIn, Sprout } from "lucide-react";
import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { LanguageSwitcher } from "../components/LanguageSwitcher";
import { useAuth } from "./AuthProvider";

export function SignInPage() {
  const { t } = useTranslation();
  const { signIn } = useAuth();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const errorId = useId();

  useEffect(() => {
    document.title = t("signIn.documentTitle");
  }, [t]);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(username, password);
    } catch (failure) {
      setError((failure as Error).message);
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <div className="sign-in__language">
        <LanguageSwitcher />
      </div>
      <form className="sign-in__card" onSubmit={submit} aria-describedby={error ? errorId : undefined}>
        <div className="brand brand--large">
          <span className="brand__mark">
            <Sprout aria-hidden="true" size={22} />
          </span>
          <span className="brand__name">{t("app.name")}</span>
        </div>
        <h1 className="sign-in__title">{t("signIn.title")}</h1>
        <p className="muted">{t("app.tagline")}</p>
        <label className="field">
          <span className="field__label">{t("signIn.username")}</span>
          <input
            className="input"
            name="username"
            autoComplete="username"
            required
            autoFocus
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        </label>
        <label className="field">
          <span className="field__label">{t("signIn.password")}</span>
          <input
            className="input"
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        {error && (
          <p id={errorId} role="alert" className="form-error">
            {error}
          </p>
        )}
        <button type="submit" className="button button--primary button--block" disabled={busy}>
          <LogIn aria-hidden="true" size={16} />
          {busy ? t("signIn.busy") : t("signIn.submit")}
        </button>
      </form>
    </main>
  );
}
