//! Everyday concepts: what lets "What's my dog's name?" find "I have a
//! golden retriever called Biscuit", and "What food do I like?" find
//! "我最喜欢的食物是饺子", with no embedder and no model.
//!
//! People ask about their own facts in other words than they told them:
//! the question names the category ("dog", "job", "food"), the fact the
//! instance ("retriever", "nurse", "饺子"). Each word of the lexicon below
//! stands for one concept; the analyzer's term of such a word (its stem,
//! or a CJK bigram or unigram) adds the concept's term to the document or
//! the query it is in, in both languages alike, so the two meet on it. A
//! concept is one more term to BM25: its IDF keeps a common one (food, in
//! a food blog) weak, and a word's own match still counts more than the
//! concept it shares with another.
//!
//! Approach and cost: the lexicon is analyzed once into a sorted table;
//! each new term of an index is looked up once (binary search), each query
//! term once. A model, when there is one, writes aliases of its own at
//! extraction time (`metadata.aliases`), which reach the same terms.

use std::sync::OnceLock;

use super::analyzer::{ascii_term, UNIGRAM};

/// Concept terms start with this, which no analyzed text holds.
pub const MARK: char = '\u{2}';

/// A concept's term (its name after [`MARK`]), optionally the broader
/// concept it belongs to (another entry's term: "spouse" is a kind of
/// "family"), then the words that stand for it, English and Chinese,
/// space-separated. A word in two lists counts for the first. A Chinese
/// word is one or two characters: the analyzer's CJK terms are unigrams
/// and bigrams, so a longer word would never meet one.
///
/// A narrow concept lets "spouse" find "wife" ahead of "sister"; its
/// broader one still lets "family" find both. Everyday vocabulary of a
/// person's own life, not any data set's words.
const LEXICON: &[&str] = &[
    "\u{2}pet pet pets animal vet leash 宠物 动物 兽医 养 领养 收养",
    "\u{2}dog \u{2}pet dog puppy pup retriever labrador poodle terrier husky corgi spaniel beagle collie \
     dachshund shepherd rottweiler pug chihuahua greyhound whippet schnauzer doberman pomeranian shiba \
     akita dalmatian mutt hound 狗 狗狗 小狗 金毛 柯基 泰迪 犬 柴犬 贵宾 比熊 博美 边牧 牧羊 土狗 藏獒 萨摩",
    "\u{2}cat \u{2}pet cat kitten kitty tabby siamese persian ragdoll 猫 猫咪 小猫 橘猫 布偶 暹罗 英短 美短 喵",
    "\u{2}bird \u{2}pet bird parrot budgie parakeet canary cockatiel cockatoo finch pigeon 鸟 鹦鹉 八哥 鸽子 \
     画眉 鸟笼",
    "\u{2}critter \u{2}pet rabbit bunny hamster gerbil guinea fish goldfish tortoise turtle lizard gecko snake \
     reptile ferret chinchilla axolotl frog tarantula 兔子 仓鼠 豚鼠 金鱼 乌龟 蜥蜴 蛇 雪貂 龙猫 \
     青蛙 鱼缸",
    "\u{2}family family relative relatives household 家人 家庭 亲戚 亲人",
    "\u{2}spouse \u{2}family wife husband spouse partner married marry fiance fiancee girlfriend boyfriend \
     老婆 老公 妻子 丈夫 太太 爱人 媳妇 结婚 伴侣 对象 男友 女友 未婚",
    "\u{2}parent \u{2}family mother mom mum mummy father dad daddy parent mama papa stepmother stepfather \
     stepmom stepdad 妈妈 母亲 爸爸 父亲 父母 爸妈 爸 妈 老爸 老妈 继母 继父",
    "\u{2}child \u{2}family son daughter child children kid baby twin girl boy toddler teenager teen infant \
     newborn 儿子 女儿 孩子 宝宝 双胞 小孩 儿女 闺女",
    "\u{2}sibling \u{2}family sister brother sibling 姐姐 妹妹 哥哥 弟弟 兄弟 姐妹 姊",
    "\u{2}elder \u{2}family grandma grandmother grandpa grandfather granny grandparent nan grandad grandson \
     granddaughter grandchild 奶奶 爷爷 祖母 祖父 外婆 外公 姥姥 姥爷 孙子 孙女 外孙",
    "\u{2}inlaw \u{2}family law 岳父 岳母 公公 婆婆 丈人",
    "\u{2}kin \u{2}family aunt uncle cousin niece nephew godmother godfather 叔叔 阿姨 舅舅 姑姑 表哥 表姐 \
     表妹 表弟 堂哥 堂姐 侄子 侄女 外甥",
    "\u{2}friend friend buddy mate pal bestie roommate flatmate neighbour neighbor 朋友 好友 闺蜜 哥们 室友 \
     邻居 发小",
    "\u{2}job job work career profession occupation employer employ hired salary earn income wage \
     paid shift 工作 职业 上班 工资 收入 薪水 挣钱 赚钱 岗位 打工 行业",
    "\u{2}boss \u{2}job boss manager supervisor ceo director chief 老板 领导 上司 上级 主管 经理 老总 总监",
    "\u{2}colleague \u{2}job colleague coworker teammate 同事 同行 搭档",
    "\u{2}workplace \u{2}job office company firm workplace factory clinic studio warehouse startup 公司 单位 \
     办公 工厂 诊所",
    "\u{2}trade \u{2}job nurse doctor engineer developer programmer teacher lawyer chef baker accountant \
     designer fisherman farmer headteacher principal pharmacist paramedic surgeon midwife therapist \
     physiotherapist psychologist scientist researcher professor lecturer tutor architect electrician \
     plumber carpenter mechanic pilot driver cashier waiter waitress barista bartender journalist writer \
     editor translator artist musician actor police officer firefighter soldier librarian analyst \
     consultant banker cleaner receptionist secretary 护士 医生 工程 程序 老师 教师 律师 厨师 会计 设计 校长 \
     药剂 医师 教授 讲师 建筑 电工 木匠 司机 机长 收银 记者 作家 编辑 翻译 画家 演员 警察 消防 军人 银行 \
     销售 保安 秘书 快递",
    "\u{2}study study school university college student degree master exam graduate course homework thesis \
     phd semester class lesson campus 学校 大学 学习 学生 专业 考试 毕业 学位 硕士 博士 课程 论文 作业 上课 \
     读书 留学 本科 学期",
    "\u{2}food food eat meal dish cuisine cook recipe snack dessert pizza pasta sushi dumpling noodle ramen \
     rice burger curry salad steak chocolate vegetarian vegan restaurant fruit vegetable meat chicken beef \
     pork seafood soup cheese egg tofu taco burrito kebab sandwich spicy 食物 吃 饭 菜 美食 饺子 面条 米饭 \
     火锅 寿司 甜点 餐厅 素食 包子 拿手 水果 蔬菜 肉 牛肉 猪肉 鸡肉 海鲜 汤 豆腐 鸡蛋 辣 零食 烧烤 炒饭 馄饨",
    "\u{2}meal \u{2}food breakfast lunch dinner supper brunch porridge cereal 早饭 早餐 午饭 午餐 晚饭 晚餐 \
     夜宵",
    "\u{2}drink \u{2}food drink beverage coffee tea latte espresso juice beer wine soda cola milk smoothie \
     whisky whiskey cocktail boba kombucha 饮品 饮料 喝 咖啡 奶茶 茶 果汁 啤酒 牛奶 可乐 白酒 红酒 豆浆 奶昔",
    "\u{2}bake \u{2}food bake bread cake sourdough oven pastry muffin cookie scone croissant 烤 面包 蛋糕 烘焙 \
     饼干 蛋挞 曲奇 烤箱",
    "\u{2}home live home house apartment flat city town neighbourhood neighborhood based reside address \
     street suburb village rent landlord 住 住在 城市 公寓 房子 定居 地址 小区 街道 郊区 租房 房东",
    "\u{2}move \u{2}home move relocate 搬家 搬",
    "\u{2}hometown \u{2}home hometown 家乡 老家 故乡 长大 籍贯",
    "\u{2}travel trip travel vacation holiday flight journey abroad country backpack tour sightseeing \
     cruise beach resort camping campsite hotel 旅行 旅游 度假 出差 机票 出国 国家 景点 酒店 露营 海边 自驾",
    "\u{2}health health sick ill hospital symptom therapy diagnosed sickness weight diet sleep \
     insomnia 健康 生病 医院 体检 睡眠 失眠 减肥 体重 看病",
    "\u{2}illness \u{2}health diabetes asthma chronic disease illness condition cancer arthritis eczema \
     anxiety depression cholesterol thyroid 慢性 糖尿 哮喘 疾病 病 血压 癌 关节 湿疹 焦虑 抑郁 甲状",
    "\u{2}allergy \u{2}health allergy allergic pollen hay sneeze intolerant intolerance lactose gluten 过敏 \
     花粉 喷嚏 鼻涕 乳糖",
    "\u{2}injury \u{2}health injury injure hurt sprain ligament fracture knee ankle broke broken wound scar \
     surgery operation 受伤 伤 骨折 膝盖 扭伤 手术 伤口",
    "\u{2}medicine \u{2}health medicine medication pill tablet prescription inhaler insulin vitamin \
     supplement 药 胰岛 维生 处方",
    "\u{2}pain \u{2}health pain headache migraine ache sore 头疼 头痛 疼 酸痛",
    "\u{2}teeth \u{2}health teeth tooth dental dentist braces 牙 牙齿 牙医 牙套",
    "\u{2}blood \u{2}health blood 血型 血",
    "\u{2}plan plan intend 打算 计划 准备 梦想 目标 将来",
    "\u{2}sport hobby sport exercise gym workout swim yoga hike cycling football soccer tennis basketball \
     climbing ski photography hobbies pastime leisure jog jogging rowing surfing skating badminton \
     volleyball golf boxing karate dance dancing chess gaming garden gardening 爱好 运动 \
     健身 游泳 瑜伽 爬山 徒步 足球 篮球 网球 滑雪 摄影 羽毛 乒乓 排球 拳击 跳舞 舞蹈 下棋 象棋 围棋 钓鱼 \
     园艺 画画 业余",
    "\u{2}race \u{2}sport race marathon run running competition triathlon tournament 比赛 马拉 跑步 半马 全马 \
     锦标",
    "\u{2}music \u{2}sport instrument piano guitar violin cello drum clarinet harp trombone harmonica \
     accordion banjo mandolin saxophone flute trumpet ukulele 乐器 钢琴 吉他 古筝 小提 长笛 二胡 笛子 琵琶",
    "\u{2}craft \u{2}sport craft pottery ceramic knit sew crochet embroidery woodwork carve 手工 陶艺 编织 \
     刺绣 木工 雕刻",
    "\u{2}reading book novel author reading library 小说 看书 阅读 图书 作者",
    "\u{2}screen movie film cinema tv 电影 电视 追剧 影院",
    "\u{2}date date 日期 哪天",
    "\u{2}birthday \u{2}date birthday born birth 生日 出生 大寿",
    "\u{2}anniversary \u{2}date anniversary wedding 纪念 婚礼",
    "\u{2}appointment \u{2}date appointment checkup 预约 挂号",
    "\u{2}festival \u{2}date festival christmas easter thanksgiving halloween diwali ramadan eid hanukkah 节日 \
     春节 清明 中秋 端午 元宵 国庆 过年",
    "\u{2}document passport visa document 护照 签证 证件 身份",
    "\u{2}lang language speak fluent english spanish french german japanese chinese mandarin italian \
     korean portuguese russian arabic hindi cantonese bilingual 语言 英语 中文 法语 日语 德语 韩语 粤语 俄语",
    "\u{2}car car drive driving vehicle motorcycle licence license bike bicycle scooter commute bus subway transport transit \
     驾照 车 开车 汽车 学车 单车 地铁 公交 通勤 电动",
    "\u{2}money money savings budget debt loan mortgage invest 钱 存钱 贷款 房贷 投资 理财 积蓄",
    "\u{2}fear afraid scared phobia fear terrified 害怕 怕 恐惧 恐高",
    "\u{2}belief religion church faith pray buddhist christian muslim 宗教 信仰 教堂 佛教",
    "\u{2}colour colour color red blue green yellow purple pink orange teal 颜色 红色 蓝色 绿色 黄色 紫色 粉色",
    "\u{2}name name named called nickname 名字 叫",
];

/// The concept term each lexicon term stands for, sorted by term.
fn table() -> &'static [(String, u8)] {
    static TABLE: OnceLock<Vec<(String, u8)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Vec::new();
        let index_of = |name: &str| LEXICON.iter().position(|e| e.split(' ').next() == Some(name));
        for (n, entry) in LEXICON.iter().enumerate() {
            let mut words = entry.split(' ').filter(|w| !w.is_empty());
            let name = words.next().unwrap_or_default();
            let mut words = words.peekable();
            // A narrow concept's own term stands for its broader one.
            if let Some(parent) = words.next_if(|w| is_concept(w)) {
                let at = index_of(parent).expect("a broader concept is an entry");
                table.push((name.to_string(), at as u8));
            }
            for word in words {
                table.extend(term_of(word).map(|t| (t, n as u8)));
            }
        }
        // First list wins: a stable sort keeps the earlier of two equal terms first.
        crate::order::sort_by(&mut table, |a, b| a.0.cmp(&b.0));
        table.dedup_by(|a, b| a.0 == b.0);
        table
    })
}

/// A word's own term, as the analyzer makes it: a stem; a CJK word as
/// itself, one character as its unigram.
fn term_of(word: &str) -> Option<String> {
    match word.chars().count() {
        _ if word.is_ascii() => ascii_term(word),
        1 => Some(format!("{UNIGRAM}{word}")),
        _ => Some(word.to_string()),
    }
}

/// The concept a word (English, or one or two CJK characters) stands for.
pub fn concept_of_word(word: &str) -> Option<&'static str> {
    concept_of(&term_of(word)?)
}

/// The concept term `term` (an analyzed term) stands for, if any.
pub fn concept_of(term: &str) -> Option<&'static str> {
    let table = table();
    let at = table.binary_search_by(|(t, _)| t.as_str().cmp(term)).ok()?;
    LEXICON[table[at].1 as usize].split(' ').next()
}

/// Whether `term` is a concept's term.
pub fn is_concept(term: &str) -> bool {
    term.starts_with(MARK)
}

/// A query's terms with the concepts they stand for added after them,
/// each once: a narrow concept's broader one too.
pub fn expand(mut terms: Vec<String>) -> Vec<String> {
    let mut i = 0;
    while i < terms.len() {
        if let Some(c) = concept_of(&terms[i]) {
            if !terms.iter().any(|t| t == c) {
                terms.push(c.to_string());
            }
        }
        i += 1;
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::analyzer::analyze_query;

    fn concepts(text: &str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = analyze_query(text).iter().filter_map(|t| concept_of(t)).collect();
        out.dedup();
        out
    }

    #[test]
    fn a_question_and_a_fact_in_other_words_share_a_concept() {
        assert_eq!(concepts("What's my dog's name?"), ["\u{2}dog", "\u{2}name"]);
        assert_eq!(concepts("I have a golden retriever called Biscuit"), ["\u{2}dog", "\u{2}name"]);
        assert_eq!(concepts("What's my job?"), ["\u{2}job"]);
        assert!(concepts("She works as a nurse").contains(&"\u{2}job"));
        assert!(concepts("What food do I like?").contains(&"\u{2}food"));
        assert!(concepts("我最喜欢的食物是饺子").contains(&"\u{2}food"));
        assert!(concepts("我养了一只猫").contains(&"\u{2}cat"));
        assert_eq!(concepts("The meeting ran late"), Vec::<&str>::new());
        // Narrow concepts meet across the two languages: spouse and 老婆,
        // a grandmother and 奶奶, breakfast and 早饭, an allergy and 花粉.
        for (a, b, c) in [
            ("What's my spouse called?", "My wife Mei teaches piano.", "\u{2}spouse"),
            ("我老婆叫什么？", "My wife Mei teaches piano.", "\u{2}spouse"),
            ("What bird does my grandma keep?", "我奶奶养了一只八哥", "\u{2}elder"),
            ("我早饭一般吃什么？", "My go-to breakfast is porridge", "\u{2}meal"),
            ("What gives me hay fever?", "我花粉过敏", "\u{2}allergy"),
            // Everyday words beyond the paraphrase set's own.
            ("Who is my best friend?", "My bestie Jo lives next door", "\u{2}friend"),
            ("What colour do I like?", "I painted the kitchen teal", "\u{2}colour"),
            ("Am I afraid of anything?", "我恐高，从不坐摩天轮", "\u{2}fear"),
            ("我信什么宗教？", "I'm a practising Buddhist", "\u{2}belief"),
            ("Which transport do I take?", "I commute by bus", "\u{2}car"),
            ("What is my dog's breed?", "我家柴犬叫豆豆", "\u{2}dog"),
        ] {
            assert!(concepts(a).contains(&c) && concepts(b).contains(&c), "{a} / {b}: {c}");
        }
    }

    #[test]
    fn a_narrow_concept_stands_for_its_broader_one() {
        assert_eq!(concept_of("\u{2}spouse"), Some("\u{2}family"));
        assert_eq!(concept_of("\u{2}dog"), Some("\u{2}pet"));
        assert_eq!(concept_of("\u{2}family"), None);
        // Every broader concept named is an entry of its own, and has none.
        for entry in LEXICON {
            if let Some(parent) = entry.split(' ').nth(1).filter(|w| is_concept(w)) {
                assert!(LEXICON.iter().any(|e| e.split(' ').next() == Some(parent)), "{entry}");
                assert_eq!(concept_of(parent), None, "{entry}");
            }
        }
    }

    #[test]
    fn every_word_of_the_lexicon_has_a_term_and_the_first_list_wins() {
        for entry in LEXICON {
            let name = entry.split(' ').next().unwrap();
            assert!(is_concept(name) && name.len() > 1 && entry.split_whitespace().count() > 2, "{entry}");
        }
        // "work" is a job word; the table has no term twice.
        assert_eq!(concept_of("work"), Some("\u{2}job"));
        assert!(table().windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn expansion_appends_each_concept_once() {
        let terms = expand(analyze_query("dog puppy cat kitten"));
        let added: Vec<&str> = terms.iter().filter(|t| is_concept(t)).map(String::as_str).collect();
        assert_eq!(added, ["\u{2}dog", "\u{2}cat", "\u{2}pet"], "{terms:?}");
    }

    #[test]
    fn chinese_words_are_one_or_two_characters() {
        // The analyzer's CJK terms are unigrams and bigrams: a longer word
        // of the lexicon would never meet a text.
        for entry in LEXICON {
            for word in entry.split(' ').filter(|w| !w.is_ascii() && !is_concept(w)) {
                assert!(matches!(word.chars().count(), 1 | 2), "{word}");
            }
        }
    }
}
