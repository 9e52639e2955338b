import { Pencil, Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { Conversation } from "../../api/chat";
import { Link } from "../../router/Router";

export function ConversationList({ conversations, currentId, onRename, onDelete }: {
  conversations: Conversation[];
  currentId: number | null;
  onRename: (conversation: Conversation) => void;
  onDelete: (conversation: Conversation) => void;
}) {
  const { t } = useTranslation();
  if (conversations.length === 0) return <p className="muted chat-sidebar__empty">{t("chat.noConversations")}</p>;
  return (
    <ul className="conversation-list" aria-label={t("chat.conversations")}>
      {conversations.map((conversation) => {
        const title = conversation.title || t("chat.untitled");
        const current = conversation.id === currentId;
        return (
          <li key={conversation.id} className={`conversation-item${current ? " is-current" : ""}`}>
            <Link to={`/chat/${conversation.id}`} className="conversation-item__link" aria-current={current ? "page" : undefined}>
              <span className="conversation-item__title">{title}</span>
              {conversation.pipeline_name && <span className="conversation-item__pipeline">{conversation.pipeline_name}</span>}
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
