import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";

import { fetchSession, signIn as postSignIn, signOut as deleteSession, type Session } from "../api/auth";
import { UNAUTHORIZED_EVENT } from "../api/client";

type AuthState =
  | { status: "checking" }
  | { status: "unreachable"; message: string }
  | { status: "anonymous" }
  | { status: "signed-in"; session: Session };

interface AuthValue {
  state: AuthState;
  signIn: (username: string, password: string) => Promise<void>;
  signOut: () => Promise<void>;
  recheck: () => void;
}

const AuthContext = createContext<AuthValue | null>(null);

function stateOf(session: Session): AuthState {
  return session.authenticated ? { status: "signed-in", session } : { status: "anonymous" };
}

/** The session: checked at start, and again whenever the API answers 401/403 (it may have expired). */
export function AuthProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<AuthState>({ status: "checking" });

  const recheck = useCallback(() => {
    fetchSession().then(
      (session) => setState(stateOf(session)),
      (error: unknown) => setState({ status: "unreachable", message: String((error as Error).message ?? error) }),
    );
  }, []);

  useEffect(() => {
    recheck();
    window.addEventListener(UNAUTHORIZED_EVENT, recheck);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, recheck);
  }, [recheck]);

  const signIn = useCallback(async (username: string, password: string) => {
    setState(stateOf(await postSignIn(username, password)));
  }, []);

  const signOut = useCallback(async () => {
    await deleteSession();
    setState({ status: "anonymous" });
  }, []);

  const value = useMemo(() => ({ state, signIn, signOut, recheck }), [state, signIn, signOut, recheck]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthValue {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("Trellis: useAuth needs an <AuthProvider>.");
  return auth;
}
