import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type AnchorHTMLAttributes,
  type MouseEvent,
  type ReactNode,
} from "react";
import { useTranslation } from "react-i18next";

import { ConfirmDialog } from "../components/ConfirmDialog";

export interface Location {
  pathname: string;
  search: string;
}

interface NavigateOptions {
  replace?: boolean;
}

interface RouterValue {
  location: Location;
  navigate: (to: string, options?: NavigateOptions) => void;
  /** Register a guard; while `current` is true, leaving asks the user first. */
  addBlocker: (guard: { current: boolean }) => () => void;
}

const RouterContext = createContext<RouterValue | null>(null);

function readLocation(): Location {
  return { pathname: window.location.pathname, search: window.location.search };
}

/** Client-side routing over the History API, with a confirm step while a page has unsaved work. */
export function RouterProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const [location, setLocation] = useState(readLocation);
  const [pending, setPending] = useState<{ proceed: () => void } | null>(null);
  const guards = useRef(new Set<{ current: boolean }>());
  const current = useRef(location);
  current.current = location;

  const blocked = () => [...guards.current].some((guard) => guard.current);

  const go = useCallback((to: string, replace = false) => {
    window.history[replace ? "replaceState" : "pushState"](null, "", to);
    setLocation(readLocation());
    window.scrollTo?.(0, 0);
  }, []);

  const navigate = useCallback(
    (to: string, options: NavigateOptions = {}) => {
      if (blocked()) setPending({ proceed: () => go(to, options.replace) });
      else go(to, options.replace);
    },
    [go],
  );

  useEffect(() => {
    const onPopState = () => {
      const target = readLocation();
      if (!blocked()) {
        setLocation(target);
        return;
      }
      // The browser already moved; put the page's address back until the user decides.
      const { pathname, search } = current.current;
      window.history.pushState(null, "", pathname + search);
      setPending({ proceed: () => go(target.pathname + target.search, true) });
    };
    window.addEventListener("popstate", onPopState);
    return () => window.removeEventListener("popstate", onPopState);
  }, [go]);

  const addBlocker = useCallback((guard: { current: boolean }) => {
    guards.current.add(guard);
    return () => {
      guards.current.delete(guard);
    };
  }, []);

  const value = useMemo(() => ({ location, navigate, addBlocker }), [location, navigate, addBlocker]);

  return (
    <RouterContext.Provider value={value}>
      {children}
      {pending && (
        <ConfirmDialog
          title={t("unsaved.title")}
          message={t("unsaved.message")}
          confirmLabel={t("unsaved.leave")}
          cancelLabel={t("unsaved.stay")}
          danger
          onConfirm={() => {
            setPending(null);
            pending.proceed();
          }}
          onCancel={() => setPending(null)}
        />
      )}
    </RouterContext.Provider>
  );
}

function useRouter(): RouterValue {
  const router = useContext(RouterContext);
  if (!router) throw new Error("Trellis: routing hooks need a <RouterProvider>.");
  return router;
}

export const useLocation = () => useRouter().location;
export const useNavigate = () => useRouter().navigate;

/** Ask before leaving (in-app links, back/forward, closing or reloading the tab) while `when`. */
export function useUnsavedChangesGuard(when: boolean): void {
  const { addBlocker } = useRouter();
  const guard = useRef({ current: when });
  guard.current.current = when;

  useEffect(() => addBlocker(guard.current), [addBlocker]);

  useEffect(() => {
    if (!when) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [when]);
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, "href"> & { to: string };

function isPlainClick(event: MouseEvent<HTMLAnchorElement>): boolean {
  return event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey;
}

export function Link({ to, onClick, ...props }: LinkProps) {
  const navigate = useNavigate();
  return (
    <a
      {...props}
      href={to}
      onClick={(event) => {
        onClick?.(event);
        if (event.defaultPrevented || !isPlainClick(event) || props.target) return;
        event.preventDefault();
        navigate(to);
      }}
    />
  );
}

/** A navigation link marked `aria-current="page"` on its section (the path and below). */
export function NavLink({ to, className, ...props }: LinkProps) {
  const { pathname } = useLocation();
  const active = pathname === to || pathname.startsWith(`${to.replace(/\/$/, "")}/`);
  return (
    <Link
      {...props}
      to={to}
      className={[className, active ? "is-active" : ""].filter(Boolean).join(" ")}
      aria-current={active ? "page" : undefined}
    />
  );
}

export function Redirect({ to }: { to: string }) {
  const navigate = useNavigate();
  useEffect(() => navigate(to, { replace: true }), [navigate, to]);
  return null;
}
