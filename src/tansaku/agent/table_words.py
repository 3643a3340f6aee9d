"""The words of store and event questions: the closed list of conditions over the tables'
columns, the columns a question may ask to see and their labels, days and place patterns
(what :mod:`tansaku.agent.table_routes` turns into SQL templates)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Condition:
    pattern: re.Pattern[str]
    label: str
    sql: str


def cond(pattern: str, label: str, sql: str) -> Condition:
    return Condition(re.compile(pattern), label, sql)


STORE_WORDS = re.compile(
    r"店舗|お店|レストラン|カフェ|飲食店|ランチ|ディナー|ショップ|イタリアン|フレンチ|和食|中華|"
    r"居酒屋|ビストロ|ベーカリー|パン屋|(?<![\u3400-\u9fff])店(?=[をはがでにも?？]|$)"
)
EVENT_WORDS = re.compile(r"イベント|催し|祭|フェス|マルシェ|ワークショップ|教室|ライブ|体験会")

STORE_CONDITIONS = (
    cond(
        r"ファミリー|家族|子連れ|子ども連れ|子供連れ",
        "ファミリー向け",
        "target_audience LIKE '%ファミリー%'",
    ),
    cond(r"カップル|デート|記念日", "カップル向け", "target_audience LIKE '%カップル%'"),
    cond(r"一人|ひとり|おひとり", "一人客向け", "target_audience LIKE '%一人客%'"),
    cond(r"シニア|高齢", "シニア向け", "target_audience LIKE '%シニア%'"),
    cond(r"観光", "観光客向け", "target_audience LIKE '%観光客%'"),
    cond(r"ペット|犬連れ|わんちゃん", "ペット同伴可", "pets_allowed = 'TRUE'"),
    cond(r"個室", "個室あり", "private_room LIKE '%\"available\": true%'"),
    cond(r"駐車場|車で", "駐車場あり", "parking LIKE '%\"available\": true%'"),
    cond(r"接待|商談|ビジネス", "ビジネス・接待向け", "Biz_Entertainment_Available = 'TRUE'"),
    cond(r"授乳", "授乳室あり", "nursing_room <> ''"),
    cond(r"ヴィーガン|ビーガン|菜食", "ヴィーガン対応", "vegan_info <> ''"),
    cond(r"ハラール|ハラル", "ハラール対応", "halal_info <> ''"),
    cond(r"グルテン", "グルテンフリー対応", "gluten_free_info <> ''"),
    cond(r"アレルギー", "アレルギー対応", "allergy_info <> ''"),
    cond(r"バリアフリー|車いす|車椅子", "バリアフリー", "accessibility <> ''"),
    cond(
        r"キッズメニュー|お子様メニュー|子ども向けメニュー",
        "キッズメニューあり",
        "kids_info LIKE '%\"kids_menu\": true%'",
    ),
    cond(r"カフェ", "カフェ", "category = 'cafe'"),
    cond(r"レストラン|飲食店", "レストラン", "category = 'restaurant'"),
    cond(r"物販|ショップ|買い物", "物販店", "category = 'retail'"),
)
EVENT_CONDITIONS = (
    cond(r"祭|フェス", "祭り", "category = 'festival'"),
    cond(r"マルシェ|市場|朝市", "マーケット", "category = 'market'"),
    cond(r"ワークショップ|教室|体験", "ワークショップ", "category = 'workshop'"),
    cond(
        r"子ども|子供|キッズ|親子",
        "子ども向け",
        "(category = 'kids' OR target_audience LIKE '%ファミリー%')",
    ),
    cond(r"音楽|ライブ|ジャズ|コンサート", "音楽", "category = 'music'"),
    cond(r"ペット", "ペット", "category = 'pets'"),
    cond(r"無料", "無料", "price LIKE '%無料%'"),
    cond(
        r"予約(が|は)?(必要|要る|いる|制|必須)",
        "予約が必要",
        "reservation_required = 'TRUE'",
    ),
    cond(
        r"予約(が|は)?(不要|いらない|要らない|なし|無し)",
        "予約不要",
        "COALESCE(reservation_required, '') <> 'TRUE'",
    ),
)
# a daily-report question that names a store or an event is not a table question
REPORT_WORDS = re.compile(r"問題|クレーム|トラブル|故障|日報|売上|事故|ミス|報告|苦情|不具合")
# words of the question that name the kind of thing asked for, not a condition on it
DOMAIN = re.compile(
    r"^(店舗|店|お店|レストラン|カフェ|飲食|ランチ|ディナー|食事|イベント|催し|探す|教える|"
    r"知る|ある|出来る|できる|行く|向け|開催|予定|一覧|おすすめ|オススメ|良い|いい|場所|"
    r"今日|明日|今週|来週|週末|今週末|今月|来月|土日|同伴|可能|対応|利用|付き|飲食店|ショップ|"
    r"エリア|地区|地域|周辺|近く|付近|界隈|辺り|あたり|全部|全て|すべて|件数|何件|数|必要)$"
)
WORD = re.compile(r"^[\w\u3040-\u30ff\u3400-\u9fff]+$")


DAYS = {
    "月": "monday",
    "火": "tuesday",
    "水": "wednesday",
    "木": "thursday",
    "金": "friday",
    "土": "saturday",
    "日": "sunday",
}
OPEN_ON = re.compile(
    r"([月火水木金土日])曜(?:日)?(?:の)?(?:に|は|も|でも)?.{0,6}?(開い|営業|やって|空い|行け|入れ)"
)
CLOSED_ON = re.compile(
    r"([月火水木金土日])曜(?:日)?(?:が|は|の|に)?(?:定休日?|休み|お休み|休業|休店|閉まって|やってない)"
)
CODE = re.compile(r"(?<![a-z0-9])(str|evt)-\d{1,6}(?![0-9])", re.IGNORECASE)
SHOW_COLUMNS = (
    (re.compile(r"電話番号|電話|連絡先|tel", re.IGNORECASE), "phone"),
    (re.compile(r"住所|所在地|どこにある"), "address"),
    (re.compile(r"営業時間|何時から|何時まで|開店|閉店"), "opening_hours"),
    (re.compile(r"メールアドレス|メール|e-?mail", re.IGNORECASE), "email"),
    (re.compile(r"アクセス|行き方|最寄り|駅から"), "access_route"),
    (re.compile(r"予約"), "reservations"),
    (re.compile(r"臨時休業|休業日"), "irregular_closures"),
    (re.compile(r"メニュー|料理"), "menu"),
)
EVENT_SHOW_COLUMNS = (
    (re.compile(r"会場|場所|どこ"), "venue"),
    (re.compile(r"料金|値段|いくら|参加費"), "price"),
    (re.compile(r"主催"), "organizer"),
    (re.compile(r"何時|時間"), "start_time"),
)
COLUMN_LABELS = {
    "venue": "会場",
    "price": "料金",
    "organizer": "主催",
    "start_time": "開始時刻",
    "phone": "電話",
    "address": "住所",
    "opening_hours": "営業時間",
    "email": "メール",
    "access_route": "アクセス",
    "reservations": "予約",
    "irregular_closures": "臨時休業",
    "menu": "メニュー",
}
DAY_LABELS = {v: k for k, v in DAYS.items()}


def describe_json(value: object) -> str:
    """A JSON cell for a person: opening hours as 月 11:30-15:00 …, a list joined."""
    if isinstance(value, dict) and set(value) <= set(DAY_LABELS):
        parts = []
        for day, spans in value.items():
            hours = "・".join(f"{s.get('open')}-{s.get('close')}" for s in spans or [])
            parts.append(f"{DAY_LABELS[day]} {hours or '休み'}")
        return " ".join(parts)
    if isinstance(value, list):
        return "、".join(
            str(v.get("reason") or v.get("date") or v) if isinstance(v, dict) else str(v)
            for v in value
        )
    if isinstance(value, dict):
        return "、".join(f"{k}: {v}" for k, v in value.items() if v not in (None, ""))
    return str(value)


CAPACITY = re.compile(
    r"(\d{1,4})\s*(?:人|名)\s*(?:以上|から|超|も)?(?:で|が)?(?:も)?(?:入れ|入る|座れ|使え|利用)"
)
WALK = re.compile(r"(?:徒歩|歩いて)\s*(\d{1,2})\s*分\s*(?:以内|まで|以下|圏内)")
STATION = re.compile(r"([\u3400-\u9fff\u30a0-\u30ff]{1,8})駅")
YEAR_END = re.compile(r"年末|年始|大晦日|お正月|正月")
YEAR_END_DAYS = ("12-28", "12-29", "12-30", "12-31")
NEW_YEAR_DAYS = ("01-01", "01-02", "01-03")
CLOSED = re.compile(r"休業|休み|休店|閉まる|閉まって|やってない|定休")
NO_ROOM_CHARGE = re.compile(
    r"(?:個室料|室料)(?:が|は)?(?:かからない|掛からない|無料|なし|無し|不要|タダ)"
)
