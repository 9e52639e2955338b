import type { Conversation, ConversationOrigin } from "../../api/chat";

/** Which conversations the sidebar lists: all, those typed on the chat page, or those programs asked. */
export type OriginFilter = "all" | "web" | "programs";

export const ORIGIN_FILTERS: readonly OriginFilter[] = ["web", "programs", "all"];

const STORAGE_KEY = "trellis.chat.origin";

const ORIGINS: Record<OriginFilter, readonly ConversationOrigin[] | null> = {
  all: null,
  web: ["web"],
  programs: ["api", "mcp"],
};

export function matchesOrigin(conversation: Conversation, filter: OriginFilter): boolean {
  const origins = ORIGINS[filter];
  return origins === null || origins.includes(conversation.origin ?? "web");
}

/**
 * The conversations `filter` keeps, in order; the open one always stays listed (a trace link
 * from the API opens its conversation whatever the filter).
 */
export function filterConversations(conversations: readonly Conversation[], filter: OriginFilter, currentId: number | null): Conversation[] {
  return conversations.filter((conversation) => conversation.id === currentId || matchesOrigin(conversation, filter));
}

/** The filter last chosen; the user's own chat conversations first. */
export function storedOriginFilter(): OriginFilter {
  try {
    const stored = window.localStorage.getItem(STORAGE_KEY);
    return stored === "all" || stored === "programs" || stored === "web" ? stored : "web";
  } catch {
    return "web";
  }
}

export function rememberOriginFilter(filter: OriginFilter): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, filter);
  } catch {
    // Storage can be disabled; the choice then lasts until the page is left.
  }
}
