from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("conversations/", one_path("ConversationCollectionApi", apis.ConversationListApi, apis.ConversationCreateApi),
         name="conversation-list"),
    path("conversations/<int:conversation_id>/",
         one_path("ConversationItemApi", apis.ConversationDetailApi, apis.ConversationUpdateApi,
                  apis.ConversationDeleteApi),
         name="conversation-detail"),
    path("conversations/<int:conversation_id>/messages/", apis.MessageListApi.as_view(), name="conversation-messages"),
    path("conversations/<int:conversation_id>/ask/", apis.AskApi.as_view(), name="conversation-ask"),
]
