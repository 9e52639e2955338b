import { api } from "./client";

/** A pipeline or knowledge base (its embedding model) that names a credential. */
export interface CredentialUse {
  type: "pipeline" | "knowledge_base";
  id: number;
  name: string;
}

/** A stored credential as the API shows it: never its secret, only a mask. */
export interface Credential {
  id: number;
  name: string;
  /** The credential component, e.g. `OpenAIAPIKey`. */
  kind: string;
  mask: string;
  shared: boolean;
  /** Whether the signed-in user owns it (and so may rotate or remove it). */
  owned: boolean;
  /** The params that are not secret, e.g. `base_url`. */
  public_params: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  rotated_at: string | null;
  last_used_at: string | null;
  /** The signed-in user's pipelines and knowledge bases that use it. */
  used_by: CredentialUse[];
}

export interface NewCredential {
  name: string;
  kind: string;
  /** The kind's params, secrets included; sent once, never returned. */
  values: Record<string, unknown>;
}

const CREDENTIALS_URL = "/api/v1/credentials/";

export const fetchCredentials = (signal?: AbortSignal) => api.get<Credential[]>(CREDENTIALS_URL, { signal });

export const createCredential = (credential: NewCredential) => api.post<Credential>(CREDENTIALS_URL, credential);

/** Replace the secret values (only those); the name, and so every pipeline naming it, stays. */
export const rotateCredential = (id: number, secrets: Record<string, string>) =>
  api.post<Credential>(`${CREDENTIALS_URL}${id}/rotate/`, { values: secrets });

/** Without `force`, the server refuses (409) to remove a credential that pipelines use. */
export const deleteCredential = (id: number, force = false) =>
  api.delete<null>(`${CREDENTIALS_URL}${id}/${force ? "?force=true" : ""}`);
