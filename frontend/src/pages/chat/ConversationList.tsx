import { Pencil, Trash2 } from "lucide-react";
import { useId } from "react";
import { useTranslation } from "react-i18next";

import type { Conversation } from "../../api/chat";
import { Link } from "../../router/Router";
import { ORIGIN_FILTERS, matchesOrigin, type OriginFilter } from "./originFilter";

export function ConversationList({ conversations, currentId, filtered = false, onRename, onDelete }: {
  conversations: Conversation[];
  currentId: number | null;
  /** Whether a filter hides some of the user's conversations (the empty list says so). */
  filtered?: boolean;
  onRename: (conversation: Conversation) => void;
  onDelete: (conversation: Conversation) => void;
}) {
  const { t } = useTranslation();
  if (conversations.length === 0) {
    return <p className="muted chat-sidebar__empty">{t(filtered ? "chat.noConversationsFiltered" : "chat.noConversations")}</p>;
  }
  return (
    <ul className="conversation-list" aria-label={t("chat.conversations")}>
      {conversations.map((conversation) => {
        const title = conversation.title || t("chat.untitled");
        const current = conversation.id === currentId;
        const asked = conversation.origin === "api" || conversation.origin === "mcp" ? conversation.origin : null;
        return (
          <li key={conversation.id} className={`conversation-item${current ? " is-current" : ""}`} data-origin={conversation.origin}>
            <Link to={`/chat/${conversation.id}`} className="conversation-item__link" aria-current={current ? "page" : undefined}>
              <span className="conversation-item__title">{title}</span>
              {(conversation.pipeline_name || asked) && (
                <span className="conversation-item__meta">
                  {asked && (
                    <span className="badge badge--queued conversation-item__origin" title={t(`chat.originTitle.${asked}`)}>
                      {t(`chat.origin.${asked}`)}
                    </span>
                  )}
                  {conversation.pipeline_name && <span className="conversation-item__pipeline">{conversation.pipeline_name}</span>}
                </span>
              )}
            </Link>
            <span className="conversation-item__actions">
              <button type="button" className="icon-button icon-button--small" aria-label={t("chat.renameNamed", { title })} title={t("chat.rename")} onClick={() => onRename(conversation)}>
                <Pencil aria-hidden="true" size={14} />
              </button>
              <button type="button" className="icon-button icon-button--small icon-button--danger" aria-label={t("chat.deleteNamed", { title })} title={t("common.delete")} onClick={() => onDelete(conversation)}>
                <Trash2 aria-hidden="true" size={14} />
              </button>
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/** Chat / API & MCP / All, each with how many conversations it holds. */
export function OriginFilterBar({ conversations, value, onChange }: {
  conversations: readonly Conversation[];
  value: OriginFilter;
  onChange: (filter: OriginFilter) => void;
}) {
  const { t } = useTranslation();
  const labelId = useId();
  return (
    <div className="origin-filter" role="group" aria-labelledby={labelId}>
      <span id={labelId} className="visually-hidden">
        {t("chat.filter.label")}
      </span>
      {ORIGIN_FILTERS.map((filter) => (
        <button
          key={filter}
          type="button"
          className={`origin-filter__option${filter === value ? " is-active" : ""}`}
          aria-pressed={filter === value}
          onClick={() => onChange(filter)}
        >
          {t(`chat.filter.${filter}`)}{" "}
          <span className="origin-filter__count">{conversations.filter((conversation) => matchesOrigin(conversation, filter)).length}</span>
        </button>
      ))}
    </div>
  );
}
