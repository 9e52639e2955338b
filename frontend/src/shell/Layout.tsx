import { Boxes, ChartColumn, Database, KeyRound, LockKeyhole, LogOut, MessagesSquare, Sprout, Workflow, type LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";

import { useAuth } from "../auth/AuthProvider";
import { LanguageSwitcher } from "../components/LanguageSwitcher";
import { useToast } from "../components/Toasts";
import { Link, NavLink } from "../router/Router";

interface Section {
  to: string;
  labelKey: string;
  icon: LucideIcon;
}

/** The app's sections, in navigation order. */
const SECTIONS: Section[] = [
  { to: "/knowledge-bases", labelKey: "nav.knowledgeBases", icon: Database },
  { to: "/pipelines", labelKey: "nav.pipelines", icon: Workflow },
  { to: "/chat", labelKey: "nav.chat", icon: MessagesSquare },
  { to: "/evaluation", labelKey: "nav.evaluation", icon: ChartColumn },
  { to: "/models", labelKey: "nav.models", icon: Boxes },
  { to: "/credentials", labelKey: "nav.credentials", icon: LockKeyhole },
];

export function Layout({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const { state, signOut } = useAuth();
  const toast = useToast();
  const username = state.status === "signed-in" ? state.session.username : null;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t("nav.skip")}
      </a>
      <header className="app-header">
        <div className="app-header__inner">
          <Link to="/" className="brand" aria-label={t("nav.home")}>
            <span className="brand__mark">
              <Sprout aria-hidden="true" size={20} />
            </span>
            <span className="brand__name">{t("app.name")}</span>
          </Link>
          <nav className="app-nav" aria-label={t("nav.label")}>
            {SECTIONS.map(({ to, labelKey, icon: Icon }) => (
              <NavLink key={to} to={to} className="app-nav__link">
                <Icon aria-hidden="true" size={17} />
                <span>{t(labelKey)}</span>
              </NavLink>
            ))}
          </nav>
          <div className="app-header__tools">
            <LanguageSwitcher />
            {username && (
              <div className="user-menu">
                <Link to="/account" className="user-menu__name" title={t("nav.account")}>
                  <KeyRound aria-hidden="true" size={14} />
                  <span>{username}</span>
                </Link>
                <button
                  type="button"
                  className="icon-button"
                  aria-label={t("nav.signOut")}
                  title={t("nav.signOut")}
                  onClick={() => signOut().catch((error: unknown) => toast.error(t("nav.signOutFailed"), error))}
                >
                  <LogOut aria-hidden="true" size={18} />
                </button>
              </div>
            )}
          </div>
        </div>
      </header>
      <main id="main" className="app-main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
