import { api } from "./client";

/** `GET /api/v1/auth/session/`: who is signed in. */
export interface Session {
  authenticated: boolean;
  id: number | null;
  username: string | null;
  is_staff: boolean;
}

const SESSION_URL = "/api/v1/auth/session/";

export const fetchSession = () => api.get<Session>(SESSION_URL);

export const signIn = (username: string, password: string) =>
  api.post<Session>(SESSION_URL, { username, password });

export const signOut = () => api.delete<void>(SESSION_URL);
