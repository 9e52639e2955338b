import { api } from "./client";

/** An API token as the API lists it: never its secret, only the first characters. */
export interface ApiToken {
  id: number;
  name: string;
  prefix: string;
  active: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A token just made: its secret is in this answer only. */
export interface IssuedApiToken extends ApiToken {
  token: string;
}

export const fetchApiTokens = (signal?: AbortSignal) => api.get<ApiToken[]>("/api/v1/api-tokens/", { signal });

export const createApiToken = (name: string) => api.post<IssuedApiToken>("/api/v1/api-tokens/", { name });

export const revokeApiToken = (id: number) => api.post<ApiToken>(`/api/v1/api-tokens/${id}/revoke/`);
