import { Columns2, MessagesSquare, Plus, Workflow } from "lucide-react";
import { useState } from "react";
import { useTranslation } from "react-i18next";

import {
  createConversation,
  deleteConversation,
  fetchConversations,
  updateConversation,
  type Conversation,
  type ConversationEvent,
} from "../../api/chat";
import { fetchPipelines, type PipelineSummary } from "../../api/pipelines";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { EmptyState, ErrorNotice, Loading } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Link, useNavigate } from "../../router/Router";
import { useDocumentTitle } from "../../shell/useDocumentTitle";
import { ConversationList, OriginFilterBar } from "./ConversationList";
import { ConversationView } from "./ConversationView";
import { filterConversations, rememberOriginFilter, storedOriginFilter, type OriginFilter } from "./originFilter";
import { rememberPipeline, preferredPipeline } from "./pipelineChoice";
import { RenameDialog } from "./RenameDialog";
import { useConversationsSocket } from "./useChatSocket";

interface ChatData {
  conversations: Conversation[];
  pipelines: PipelineSummary[];
}

type Dialog = { kind: "rename"; conversation: Conversation } | { kind: "delete"; conversation: Conversation } | null;

/** Conversations on the left, the open one beside them with its answers and their traces. */
export function ChatPage({ id }: { id: number | null }) {
  const { t, i18n } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<Dialog>(null);
  const [creating, setCreating] = useState(false);
  const [originFilter, setOriginFilter] = useState<OriginFilter>(storedOriginFilter);
  const { state, reload, update } = useLoad<ChatData>(
    async (signal) => {
      const [conversations, pipelines] = await Promise.all([fetchConversations(signal), fetchPipelines(signal)]);
      return { conversations, pipelines };
    },
    [i18n.resolvedLanguage],
    (fresh, shown) => ({ ...fresh, conversations: keepNewer(fresh.conversations, shown.conversations) }),
  );
  const current = state.status === "ready" && id !== null ? state.data.conversations.find((item) => item.id === id) ?? null : null;
  useDocumentTitle(current?.title || t("chat.title"));

  const replace = (conversation: Conversation) =>
    update((data) => ({ ...data, conversations: data.conversations.map((item) => (item.id === conversation.id ? conversation : item)) }));

  // Titles, new and deleted conversations from every tab (and the first question's title), live.
  useConversationsSocket({
    onEvent: (event) => update((data) => ({ ...data, conversations: applyConversationEvent(data.conversations, event) })),
    onReconnected: reload,
    onDropped: () => undefined,
  });

  const start = async () => {
    if (state.status !== "ready") return;
    setCreating(true);
    try {
      const conversation = await createConversation({ pipeline: preferredPipeline(state.data.pipelines) });
      // The conversations socket may have announced it already: one row per conversation.
      update((data) => ({
        ...data,
        conversations: applyConversationEvent(data.conversations, { type: "conversation.created", conversation }),
      }));
      navigate(`/chat/${conversation.id}`);
    } catch (error) {
      toast.error(t("chat.createFailed"), error);
    } finally {
      setCreating(false);
    }
  };

  const rename = async (conversation: Conversation, title: string) => {
    try {
      replace(await updateConversation(conversation.id, { title }));
      setDialog(null);
    } catch (error) {
      toast.error(t("chat.renameFailed"), error);
    }
  };

  const remove = async (conversation: Conversation) => {
    setDialog(null);
    try {
      await deleteConversation(conversation.id);
      update((data) => ({ ...data, conversations: data.conversations.filter((item) => item.id !== conversation.id) }));
      toast.success(t("chat.deleted", { title: conversation.title || t("chat.untitled") }));
      if (conversation.id === id) navigate("/chat");
    } catch (error) {
      toast.error(t("chat.deleteFailed"), error);
    }
  };

  const switchPipeline = async (conversation: Conversation, pipeline: number) => {
    try {
      replace(await updateConversation(conversation.id, { pipeline }));
      rememberPipeline(pipeline);
    } catch (error) {
      toast.error(t("chat.pipelineFailed"), error);
    }
  };

  if (state.status === "loading") return <Loading label={t("chat.loading")} />;
  if (state.status === "error") return <ErrorNotice title={t("chat.loadFailed")} message={state.message} onRetry={reload} />;
  const { conversations, pipelines } = state.data;

  return (
    <section className="chat-page">
      <h1 className="visually-hidden">{t("chat.title")}</h1>
      <aside className="chat-sidebar" aria-label={t("chat.conversations")}>
        <button type="button" className="button button--primary button--block" onClick={() => void start()} disabled={creating}>
          <Plus aria-hidden="true" size={16} />
          {t("chat.new")}
        </button>
        <Link to="/chat/compare" className="button button--block">
          <Columns2 aria-hidden="true" size={16} />
          {t("compare.open")}
        </Link>
        <OriginFilterBar
          conversations={conversations}
          value={originFilter}
          onChange={(filter) => {
            setOriginFilter(filter);
            rememberOriginFilter(filter);
          }}
        />
        <ConversationList
          conversations={filterConversations(conversations, originFilter, id)}
          filtered={originFilter !== "all" && conversations.length > 0}
          currentId={id}
          onRename={(conversation) => setDialog({ kind: "rename", conversation })}
          onDelete={(conversation) => setDialog({ kind: "delete", conversation })}
        />
      </aside>

      {pipelines.length === 0 ? (
        <EmptyState icon={<Workflow aria-hidden="true" size={28} />} title={t("chat.noPipelines")}>
          <p className="muted">{t("chat.noPipelinesHint")}</p>
          <Link to="/pipelines" className="button button--primary">
            {t("chat.goToPipelines")}
          </Link>
        </EmptyState>
      ) : current ? (
        <ConversationView
          key={current.id}
          conversation={current}
          pipelines={pipelines}
          onSwitchPipeline={(pipeline) => switchPipeline(current, pipeline)}
          onActivity={reload}
          onReloadPipelines={reload}
        />
      ) : id !== null ? (
        <ErrorNotice title={t("chat.notFound")} message={t("chat.notFoundHint")} />
      ) : (
        <EmptyState icon={<MessagesSquare aria-hidden="true" size={28} />} title={t("chat.emptyTitle")}>
          <p className="muted">{t("chat.emptyHint")}</p>
        </EmptyState>
      )}

      {dialog?.kind === "rename" && (
        <RenameDialog
          initial={dialog.conversation.title}
          onCancel={() => setDialog(null)}
          onSave={(title) => void rename(dialog.conversation, title)}
        />
      )}
      {dialog?.kind === "delete" && (
        <ConfirmDialog
          title={t("chat.deleteTitle")}
          message={t("chat.deleteMessage", { title: dialog.conversation.title || t("chat.untitled") })}
          confirmLabel={t("common.delete")}
          danger
          onConfirm={() => void remove(dialog.conversation)}
          onCancel={() => setDialog(null)}
        />
      )}
    </section>
  );
}

/**
 * The reloaded list, except where the page already shows a newer copy of a conversation: a
 * pipeline switched while the reload was in flight stays switched.
 */
export function keepNewer(fresh: Conversation[], shown: Conversation[]): Conversation[] {
  const known = new Map(shown.map((item) => [item.id, item]));
  return sortByActivity(fresh.map((item) => {
    const seen = known.get(item.id);
    return seen && seen.updated_at > item.updated_at ? seen : item;
  }));
}

function sortByActivity(conversations: Conversation[]): Conversation[] {
  return conversations.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : b.id - a.id));
}

/** The list after `event`, most recently active first (as the API lists it). */
export function applyConversationEvent(conversations: Conversation[], event: ConversationEvent): Conversation[] {
  if (event.type === "conversation.deleted") return conversations.filter((item) => item.id !== event.conversation_id);
  const changed = event.conversation;
  const rest = conversations.filter((item) => item.id !== changed.id);
  const known = conversations.find((item) => item.id === changed.id);
  if (known && known.updated_at > changed.updated_at) return conversations; // an older event than what is shown
  return sortByActivity([changed, ...rest]);
}
