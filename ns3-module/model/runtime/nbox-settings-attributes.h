/*
 * The ns-3 face of nbox::coll::CollectiveSettings (collectives/settings.h): attribute
 * accessors that read and write one field of the settings an object keeps (its
 * GetCollectiveSettings and SetCollectiveSettings), so that the settings stay the one place
 * each choice is held, and checkers built from the settings' table of which algorithms each
 * operation allows.
 */
#ifndef NBOX_SETTINGS_ATTRIBUTES_H
#define NBOX_SETTINGS_ATTRIBUTES_H

#include "ns3/attribute.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/uinteger.h"

#include "collectives/settings.h"

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ns3
{

/** The attribute spelling of a choice: "Ring", "HalvingDoubling", ... */
std::string NboxAttributeSpelling(nbox::coll::AlgorithmChoice choice);

/** An enum checker of the choices the table allows operation `key` ("allreduce"), the
 * first the default. */
Ptr<const AttributeChecker> MakeNboxAlgorithmChecker(std::string_view key);

/** Reads and writes one field of the collective settings an `Owner` keeps; a value that
 * would make them invalid (nbox::coll::ValidateSettings) is refused as a bad attribute value. */
template<typename Owner> class NboxSettingsAccessor : public AttributeAccessor
{
  public:
    using Write = std::function<bool(nbox::coll::CollectiveSettings&, const AttributeValue&)>;
    using Read = std::function<bool(const nbox::coll::CollectiveSettings&, AttributeValue&)>;

    NboxSettingsAccessor(Write write, Read read)
        : m_write(std::move(write))
        , m_read(std::move(read))
    {
    }

    bool
    Set(ObjectBase* object, const AttributeValue& value) const override
    {
        auto* owner = dynamic_cast<Owner*>(object);
        if (owner == nullptr)
        {
            return false;
        }
        nbox::coll::CollectiveSettings settings = owner->GetCollectiveSettings();
        if (!m_write(settings, value) || !IsValid(settings))
        {
            return false; // the attribute is refused, the settings stay as they were
        }
        owner->SetCollectiveSettings(settings);
        return true;
    }

    bool
    Get(const ObjectBase* object, AttributeValue& value) const override
    {
        const auto* owner = dynamic_cast<const Owner*>(object);
        return owner != nullptr && m_read(owner->GetCollectiveSettings(), value);
    }

    bool
    HasGetter() const override
    {
        return true;
    }

    bool
    HasSetter() const override
    {
        return true;
    }

  private:
    static bool
    IsValid(const nbox::coll::CollectiveSettings& settings)
    {
        try
        {
            nbox::coll::ValidateSettings(settings);
            return true;
        }
        catch (const std::invalid_argument&)
        {
            return false;
        }
    }

    Write m_write;
    Read m_read;
};

/**
 * Field `member` as an attribute of value type `Value`: `toField` turns the value's Get() into
 * the field, `toValue` the field into what the value's Set() takes.
 */
template<typename Owner, typename Value, typename T, typename ToField, typename ToValue>
Ptr<const AttributeAccessor>
MakeNboxSettingsAccessor(T nbox::coll::CollectiveSettings::*member, ToField toField,
                         ToValue toValue)
{
    return Ptr<const AttributeAccessor>(
        new NboxSettingsAccessor<Owner>(
            [member, toField](nbox::coll::CollectiveSettings& s, const AttributeValue& value)
            {
                const auto* v = dynamic_cast<const Value*>(&value);
                if (v != nullptr)
                {
                    s.*member = toField(v->Get());
                }
                return v != nullptr;
            },
            [member, toValue](const nbox::coll::CollectiveSettings& s, AttributeValue& value)
            {
                auto* v = dynamic_cast<Value*>(&value);
                if (v != nullptr)
                {
                    v->Set(toValue(s.*member));
                }
                return v != nullptr;
            }),
        false);
}

/** A whole-number field (channels, chunk_bytes, ranks_per_server) as a UintegerValue. */
template<typename Owner, typename T>
Ptr<const AttributeAccessor>
MakeNboxSettingsUintegerAccessor(T nbox::coll::CollectiveSettings::*member)
{
    return MakeNboxSettingsAccessor<Owner, UintegerValue>(
        member, [](uint64_t value) { return static_cast<T>(value); },
        [](T field) { return static_cast<uint64_t>(field); });
}

/** A rate field in bits per second (nic_bps, scale_up_bps) as a DataRateValue. */
template<typename Owner>
Ptr<const AttributeAccessor>
MakeNboxSettingsRateAccessor(uint64_t nbox::coll::CollectiveSettings::*member)
{
    return MakeNboxSettingsAccessor<Owner, DataRateValue>(
        member, [](const DataRate& rate) { return rate.GetBitRate(); },
        [](uint64_t bps) { return DataRate(bps); });
}

/** The protocol (nbox::coll::ProtocolChoice) as an EnumValue. */
template<typename Owner>
Ptr<const AttributeAccessor>
MakeNboxSettingsProtocolAccessor()
{
    return MakeNboxSettingsAccessor<Owner, EnumValue>(
        &nbox::coll::CollectiveSettings::protocol,
        [](int value) { return static_cast<nbox::coll::ProtocolChoice>(value); },
        [](nbox::coll::ProtocolChoice choice) { return static_cast<int>(choice); });
}

/** Operation `key`'s algorithm (the table's member for it) as an EnumValue. */
template<typename Owner>
Ptr<const AttributeAccessor>
MakeNboxSettingsAlgorithmAccessor(std::string_view key)
{
    return MakeNboxSettingsAccessor<Owner, EnumValue>(
        nbox::coll::OperationChoicesOf(key).member,
        [](int value) { return static_cast<nbox::coll::AlgorithmChoice>(value); },
        [](nbox::coll::AlgorithmChoice choice) { return static_cast<int>(choice); });
}

} // namespace ns3

#endif /* NBOX_SETTINGS_ATTRIBUTES_H */
